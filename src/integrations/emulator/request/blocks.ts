import { z } from 'zod';
import { CACHE_TTLS } from '../../../core/wire/cache.ts';

/*
 * Content blocks of a Messages request, field for field from the SDK 1.14 declarations
 * (`resources/messages/messages.d.ts` and its `beta/` twin: clients send the beta superset to
 * `/v1/messages?beta=true`). Every object is strict, as the API is: a field it does not know is
 * a 400 "Extra inputs are not permitted" at whatever depth it sits. Nested values the emulator
 * does not model (citations, sources' payloads, tool references) are typed loosely by their
 * SDK type, never by guessing their fields.
 */

/**
 * `cache_control`. `scope: "global"` is the beta `prompt-caching-scope-2026-01-05` (Claude Code
 * and Qwen Code send it to the first-party API). The emulator keeps one cache per process, so
 * a scope changes nothing here; it is accepted, not modelled.
 */
export const cacheControl = z
  .strictObject({
    type: z.literal('ephemeral'),
    ttl: z.enum(CACHE_TTLS).optional(),
    scope: z.enum(['global']).nullable().optional(),
  })
  .nullable()
  .optional();

const citations = z
  .array(z.looseObject({ type: z.string() }))
  .nullable()
  .optional();
const citationsConfig = z.looseObject({ enabled: z.boolean().optional() }).nullable().optional();

export const textBlock = z.strictObject({
  type: z.literal('text'),
  text: z.string(),
  cache_control: cacheControl,
  citations,
});

const imageSource = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('base64'), media_type: z.string(), data: z.string() }),
  z.strictObject({ type: z.literal('url'), url: z.string() }),
  z.strictObject({ type: z.literal('file'), file_id: z.string() }),
]);
const imageBlock = z.strictObject({
  type: z.literal('image'),
  source: imageSource,
  cache_control: cacheControl,
  transformations: z.looseObject({}).nullable().optional(),
});

const documentSource = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('base64'), media_type: z.string(), data: z.string() }),
  z.strictObject({ type: z.literal('text'), media_type: z.string(), data: z.string() }),
  z.strictObject({
    type: z.literal('content'),
    content: z.union([z.string(), z.array(z.looseObject({ type: z.string() }))]),
  }),
  z.strictObject({ type: z.literal('url'), url: z.string() }),
  z.strictObject({ type: z.literal('file'), file_id: z.string() }),
]);
const documentBlock = z.strictObject({
  type: z.literal('document'),
  source: documentSource,
  cache_control: cacheControl,
  citations: citationsConfig,
  context: z.string().nullable().optional(),
  title: z.string().nullable().optional(),
});

const searchResultBlock = z.strictObject({
  type: z.literal('search_result'),
  source: z.string(),
  title: z.string(),
  content: z.array(textBlock),
  cache_control: cacheControl,
  citations: citationsConfig,
});

// `tool_reference` (advanced tool use) and `browser_state` may sit in a tool_result.
const toolReference = z.strictObject({
  type: z.literal('tool_reference'),
  tool_name: z.string(),
  cache_control: cacheControl,
});

const toolUseBlock = z.strictObject({
  type: z.literal('tool_use'),
  id: z.string().min(1),
  name: z.string().min(1),
  input: z.record(z.string(), z.unknown()),
  cache_control: cacheControl,
  caller: z.looseObject({ type: z.string() }).optional(),
  toolset_name: z.string().nullable().optional(),
});

const toolResultBlock = z.strictObject({
  type: z.literal('tool_result'),
  tool_use_id: z.string().min(1),
  content: z
    .union([
      z.string(),
      z.array(z.discriminatedUnion('type', [textBlock, imageBlock, documentBlock, searchResultBlock, toolReference])),
    ])
    .optional(),
  is_error: z.boolean().optional(),
  cache_control: cacheControl,
  toolset_name: z.string().nullable().optional(),
});

// Thinking blocks may not carry cache_control; the semantic check names that rule precisely,
// so the field is allowed through here.
const thinkingBlock = z.strictObject({
  type: z.literal('thinking'),
  thinking: z.string(),
  signature: z.string(),
  cache_control: z.unknown().optional(),
});
const redactedThinkingBlock = z.strictObject({
  type: z.literal('redacted_thinking'),
  data: z.string(),
  cache_control: z.unknown().optional(),
});

/*
 * Blocks of server tools (web search, code execution, MCP, compaction…) are the API's own
 * output being replayed; the emulator runs no server tools, so it checks only their `type`
 * and keeps them as cache positions. This is the one place fields are not checked.
 */
const SERVER_BLOCK_TYPES = [
  'server_tool_use',
  'web_search_tool_result',
  'web_fetch_tool_result',
  'code_execution_tool_result',
  'bash_code_execution_tool_result',
  'text_editor_code_execution_tool_result',
  'tool_search_tool_result',
  'mcp_tool_use',
  'mcp_tool_result',
  'container_upload',
  'compaction',
] as const;
const serverBlocks = SERVER_BLOCK_TYPES.map((type) =>
  z.looseObject({ type: z.literal(type), cache_control: cacheControl }),
);

const contentBlock = z.discriminatedUnion('type', [
  textBlock,
  imageBlock,
  documentBlock,
  searchResultBlock,
  toolUseBlock,
  toolResultBlock,
  thinkingBlock,
  redactedThinkingBlock,
  toolReference,
  ...serverBlocks,
]);

/** Mid-conversation tool changes (beta `mid-conversation-tool-changes-2026-07-01`). */
const toolChange = z.looseObject({ type: z.string() });
const toolAddition = z.strictObject({
  type: z.literal('tool_addition'),
  tool: toolChange,
  cache_control: cacheControl,
});
const toolRemoval = z.strictObject({ type: z.literal('tool_removal'), tool: toolChange, cache_control: cacheControl });

const effort = z.enum(['low', 'medium', 'high', 'xhigh', 'max']).nullable().optional();

const turnContent = z.union([z.string(), z.array(contentBlock)]);
export const userMessage = z.strictObject({ role: z.literal('user'), content: turnContent });
export const assistantMessage = z.strictObject({ role: z.literal('assistant'), content: turnContent });

/**
 * `role: "system"` turns inside `messages` (GA in 2026-10-21: the SDK's `SystemMessageParam`;
 * `clear_at` and `output_config` per message, and tool changes, from the beta twin).
 */
export const systemMessage = z.strictObject({
  role: z.literal('system'),
  content: z
    .union([z.string(), z.array(z.discriminatedUnion('type', [textBlock, toolAddition, toolRemoval]))])
    .optional(),
  clear_at: z.enum(['next_user_message', 'never']).nullable().optional(),
  output_config: z.strictObject({ effort }).nullable().optional(),
});

export { effort };
