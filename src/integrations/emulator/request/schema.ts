import { z } from 'zod';
import { invalidRequest } from '../api-error.ts';
import type { MessagesRequest } from '../types.ts';
import { assistantMessage, cacheControl, effort, systemMessage, textBlock, userMessage } from './blocks.ts';

/*
 * The structure of a Messages request, from the SDK 1.14 declarations (`MessageCreateParamsBase`
 * and its beta twin). Used to *check* a body only: the emulator keeps the parsed JSON as the
 * client sent it, because the cache hashes blocks in their received key order and a schema's
 * output would reorder them. Strict at every level, as the API is: an unknown field anywhere is
 * "<path>: Extra inputs are not permitted" (the API's wording, which clients match on).
 */

const message = z.discriminatedUnion('role', [userMessage, assistantMessage, systemMessage]);

const toolName = z.string().regex(/^[a-zA-Z0-9_-]{1,128}$/, 'String should match pattern ^[a-zA-Z0-9_-]{1,128}$');

const customTool = z.strictObject({
  name: toolName,
  description: z.string().optional(),
  input_schema: z.looseObject({ type: z.literal('object') }),
  type: z.enum(['custom']).nullable().optional(),
  cache_control: cacheControl,
  allowed_callers: z.array(z.string()).optional(),
  defer_loading: z.boolean().optional(),
  eager_input_streaming: z.boolean().nullable().optional(),
  input_examples: z.array(z.looseObject({})).optional(),
  strict: z.boolean().optional(),
});

/**
 * A custom tool is checked field for field; a server tool (`bash_20250124`, `web_search_…`,
 * `mcp_toolset`, …) runs on the API's side, which the emulator does not model: only its type
 * and name are checked.
 */
const tool = z.looseObject({ type: z.string().nullable().optional() }).superRefine((t, ctx) => {
  const custom = t.type === undefined || t.type === null || t.type === 'custom';
  const result = (
    custom ? customTool : z.looseObject({ type: z.string(), name: toolName.optional(), cache_control: cacheControl })
  ).safeParse(t);
  if (!result.success)
    for (const issue of result.error.issues)
      ctx.addIssue({ ...issue, path: issue.path } as Parameters<typeof ctx.addIssue>[0]);
});

const toolChoice = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('auto'), disable_parallel_tool_use: z.boolean().optional() }),
  z.strictObject({ type: z.literal('any'), disable_parallel_tool_use: z.boolean().optional() }),
  z.strictObject({
    type: z.literal('tool'),
    name: z.string().min(1),
    disable_parallel_tool_use: z.boolean().optional(),
  }),
  z.strictObject({ type: z.literal('none') }),
]);

const display = z.enum(['summarized', 'omitted', 'updates']).nullable().optional();
/** `thinking.block_binding` (beta `thinking-binding-controls-2026-08-01`). */
const blockBinding = z
  .strictObject({ prefix_mismatch_behavior: z.enum(['error', 'drop_block']).nullable().optional() })
  .nullable()
  .optional();

const thinkingConfig = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('enabled'),
    budget_tokens: z.number().int().min(1024),
    display,
    block_binding: blockBinding,
  }),
  z.strictObject({ type: z.literal('disabled') }),
  z.strictObject({ type: z.literal('adaptive'), display, block_binding: blockBinding }),
  z.strictObject({ type: z.literal('between_tools') }),
]);

const outputConfig = z.strictObject({
  effort,
  format: z.looseObject({ type: z.string() }).nullable().optional(),
  task_budget: z.looseObject({}).nullable().optional(),
});

/** Context-management edits run on the API's side; the emulator accepts them and applies none. */
const contextManagement = z
  .strictObject({ edits: z.array(z.looseObject({ type: z.string() })).optional() })
  .nullable()
  .optional();

const common = {
  model: z.string().min(1),
  messages: z.array(message).min(1),
  system: z.union([z.string(), z.array(textBlock)]).optional(),
  tools: z.array(tool).optional(),
  tool_choice: toolChoice.optional(),
  thinking: thinkingConfig.optional(),
  cache_control: cacheControl,
  output_config: outputConfig.optional(),
  context_management: contextManagement,
  speed: z.enum(['standard', 'fast']).nullable().optional(),
  mcp_servers: z.array(z.looseObject({ type: z.string() })).optional(),
  user_profile_id: z.string().optional(),
  workspace_id: z.string().optional(),
  output_format: z.looseObject({ type: z.string() }).nullable().optional(),
  compaction: z.looseObject({}).nullable().optional(),
  billing_policy: z.unknown().optional(),
};

const messagesRequest = z.strictObject({
  ...common,
  max_tokens: z.number().int().nonnegative(),
  stop_sequences: z.array(z.string()).optional(),
  stream: z.boolean().optional(),
  metadata: z.strictObject({ user_id: z.string().nullable().optional() }).optional(),
  service_tier: z.enum(['auto', 'standard_only']).optional(),
  diagnostics: z.strictObject({ previous_message_id: z.string().nullable().optional() }).nullable().optional(),
  inference_geo: z.string().nullable().optional(),
  container: z
    .union([z.string(), z.looseObject({})])
    .nullable()
    .optional(),
  fallbacks: z.unknown().optional(),
  fallback_credit_token: z.unknown().optional(),
  thread: z.looseObject({}).nullable().optional(),
  // Accepted up to 2023-06-01; `validate.ts` refuses them under 2026-10-21.
  temperature: z.number().min(0).max(1).optional(),
  top_p: z.number().min(0).max(1).optional(),
  top_k: z.number().int().nonnegative().optional(),
});

/*
 * count_tokens: the SDK types it with fewer fields than a message (no max_tokens, stream,
 * metadata…), but a client that counts the very body it will send (forkcache measures its
 * frozen head this way) sends them all. The emulator accepts every Messages field here and
 * ignores the ones that do not affect the count; unknown fields are still refused. A choice,
 * not verified against the API.
 */
const countTokensRequest = messagesRequest.partial({ max_tokens: true });

/** `messages.0.content.1.text`: the API's own way of naming a field. */
function apiPath(path: readonly PropertyKey[]): string {
  return path.length === 0 ? '(body)' : path.map(String).join('.');
}

/** One zod issue as the API words it; unknown keys become one line each, as pydantic's do. */
function describe(issue: z.core.$ZodIssue): { path: string; message: string }[] {
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((key) => ({
      path: apiPath([...issue.path, key]),
      message: 'Extra inputs are not permitted',
    }));
  }
  return [{ path: apiPath(issue.path), message: issue.message }];
}

function check(schema: z.ZodType, body: unknown): void {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw invalidRequest('The request body must be a JSON object.');
  }
  const result = schema.safeParse(body);
  if (result.success) return;
  const issues = result.error.issues.flatMap(describe);
  throw invalidRequest(issues.map((i) => `${i.path}: ${i.message}`).join('; '), { issues });
}

/** Check the shape of a `POST /v1/messages` body; returns it unchanged (the original object). */
export function checkMessagesRequest(body: unknown): MessagesRequest {
  check(messagesRequest, body);
  return body as MessagesRequest;
}

/** Check a `count_tokens` body (no `max_tokens` needed); returns it unchanged. */
export function checkCountTokensRequest(body: unknown): MessagesRequest {
  check(countTokensRequest, body);
  return body as MessagesRequest;
}
