import { z } from 'zod';
import { invalidRequest } from '../api-error.ts';
import type { MessagesRequest } from '../types.ts';

/*
 * The structure of a Messages request. Used to *check* a body only: the emulator keeps the
 * parsed JSON as the client sent it, because the cache hashes blocks in their received key
 * order and a schema's output would reorder them. Objects are loose: the API has many optional
 * fields (service_tier, container, …) that the emulator ignores but must not reject.
 */

const cacheControl = z
  .strictObject({ type: z.literal('ephemeral'), ttl: z.enum(['5m', '1h']).optional() })
  .nullable()
  .optional();

const text = z.looseObject({ type: z.literal('text'), text: z.string(), cache_control: cacheControl });
const image = z.looseObject({
  type: z.literal('image'),
  source: z.looseObject({ type: z.enum(['base64', 'url', 'file']) }),
  cache_control: cacheControl,
});
const document = z.looseObject({
  type: z.literal('document'),
  source: z.looseObject({ type: z.enum(['base64', 'text', 'url', 'content', 'file']) }),
  cache_control: cacheControl,
});
const searchResult = z.looseObject({
  type: z.literal('search_result'),
  source: z.string(),
  title: z.string(),
  content: z.array(text),
  cache_control: cacheControl,
});
const toolUse = z.looseObject({
  type: z.literal('tool_use'),
  id: z.string().min(1),
  name: z.string().min(1),
  input: z.record(z.string(), z.unknown()),
  cache_control: cacheControl,
});
const toolResult = z.looseObject({
  type: z.literal('tool_result'),
  tool_use_id: z.string().min(1),
  content: z.union([z.string(), z.array(z.discriminatedUnion('type', [text, image, document, searchResult]))]).optional(),
  is_error: z.boolean().optional(),
  cache_control: cacheControl,
});
// Thinking blocks may not carry cache_control; the semantic check names that rule precisely.
const thinking = z.looseObject({ type: z.literal('thinking'), thinking: z.string(), signature: z.string() });
const redactedThinking = z.looseObject({ type: z.literal('redacted_thinking'), data: z.string() });

const contentBlock = z.discriminatedUnion('type', [text, image, document, searchResult, toolUse, toolResult, thinking, redactedThinking]);

const message = z.strictObject({
  role: z.enum(['user', 'assistant']),
  content: z.union([z.string(), z.array(contentBlock)]),
});

const tool = z
  .looseObject({
    name: z.string().regex(/^[a-zA-Z0-9_-]{1,128}$/, 'String should match pattern ^[a-zA-Z0-9_-]{1,128}$'),
    description: z.string().optional(),
    input_schema: z.looseObject({ type: z.literal('object') }).optional(),
    type: z.string().optional(),
    cache_control: cacheControl,
  })
  .refine((t) => (t.type !== undefined && t.type !== 'custom') || t.input_schema !== undefined, {
    message: 'custom tools need an input_schema',
    path: ['input_schema'],
  });

const toolChoice = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('auto'), disable_parallel_tool_use: z.boolean().optional() }),
  z.strictObject({ type: z.literal('any'), disable_parallel_tool_use: z.boolean().optional() }),
  z.strictObject({ type: z.literal('tool'), name: z.string().min(1), disable_parallel_tool_use: z.boolean().optional() }),
  z.strictObject({ type: z.literal('none') }),
]);

const thinkingConfig = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('enabled'), budget_tokens: z.number().int().min(1024) }),
  z.strictObject({ type: z.literal('disabled') }),
  z.looseObject({ type: z.literal('adaptive') }),
]);

const common = {
  model: z.string().min(1),
  messages: z.array(message).min(1),
  system: z.union([z.string(), z.array(text)]).optional(),
  tools: z.array(tool).optional(),
  tool_choice: toolChoice.optional(),
  thinking: thinkingConfig.optional(),
  cache_control: cacheControl,
  output_config: z.looseObject({}).optional(),
  diagnostics: z.looseObject({ previous_message_id: z.string().nullable().optional() }).nullable().optional(),
};

const messagesRequest = z.looseObject({
  ...common,
  max_tokens: z.number().int().nonnegative(),
  stop_sequences: z.array(z.string()).optional(),
  stream: z.boolean().optional(),
  metadata: z.looseObject({}).optional(),
  temperature: z.number().min(0).max(1).optional(),
  top_p: z.number().min(0).max(1).optional(),
  top_k: z.number().int().nonnegative().optional(),
});

const countTokensRequest = z.looseObject(common);

/** `messages.0.content.1.text`: the API's own way of naming a field. */
export function apiPath(path: readonly PropertyKey[]): string {
  return path.length === 0 ? '(body)' : path.map(String).join('.');
}

function check(schema: z.ZodType, body: unknown): void {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw invalidRequest('The request body must be a JSON object.');
  }
  const result = schema.safeParse(body);
  if (result.success) return;
  const issues = result.error.issues;
  throw invalidRequest(issues.map((i) => `${apiPath(i.path)}: ${i.message}`).join('; '), {
    issues: issues.map((i) => ({ path: apiPath(i.path), message: i.message })),
  });
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
