import { z } from 'zod';
import { formatPath } from '../../../core/util/validation.ts';
import { OpenAiError } from './errors.ts';

/*
 * The structure of a Chat Completions request, checked the way the OpenAI-compatible APIs do:
 * loose at the top (providers accept and ignore each other's extra fields, e.g. DashScope's
 * `enable_thinking`, OpenAI's `prompt_cache_key`), strict where a mistake would change the
 * prompt. The body itself is kept as received: the cache hashes the client's bytes.
 */

const cacheControl = z.strictObject({ type: z.literal('ephemeral'), ttl: z.string().optional() }).optional();

const textPart = z.looseObject({ type: z.literal('text'), text: z.string(), cache_control: cacheControl });
const imagePart = z.looseObject({
  type: z.literal('image_url'),
  image_url: z.looseObject({ url: z.string() }),
  cache_control: cacheControl,
});
const part = z.discriminatedUnion('type', [
  textPart,
  imagePart,
  z.looseObject({ type: z.enum(['input_audio', 'file', 'video_url', 'video']) }),
]);
const content = z.union([z.string(), z.array(part)]);

const toolCall = z.looseObject({
  id: z.string().min(1),
  type: z.literal('function'),
  function: z.looseObject({ name: z.string().min(1), arguments: z.string() }),
});

const message = z.discriminatedUnion('role', [
  z.looseObject({ role: z.literal('system'), content }),
  z.looseObject({ role: z.literal('developer'), content }),
  z.looseObject({ role: z.literal('user'), content }),
  z.looseObject({
    role: z.literal('assistant'),
    content: content.nullable().optional(),
    tool_calls: z.array(toolCall).optional(),
    reasoning_content: z.string().nullable().optional(),
  }),
  z.looseObject({ role: z.literal('tool'), content, tool_call_id: z.string().min(1) }),
]);

const functionTool = z.looseObject({
  type: z.literal('function'),
  function: z.looseObject({
    name: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, 'string should match pattern ^[a-zA-Z0-9_-]{1,64}$'),
    description: z.string().optional(),
    parameters: z.looseObject({}).optional(),
    strict: z.boolean().nullable().optional(),
  }),
  cache_control: cacheControl,
});

const toolChoice = z.union([
  z.enum(['none', 'auto', 'required']),
  z.looseObject({ type: z.literal('function'), function: z.looseObject({ name: z.string().min(1) }) }),
]);

const positiveInt = z.number().int().positive();

export const chatRequestSchema = z.looseObject({
  model: z.string().min(1),
  messages: z.array(message).min(1),
  tools: z.array(functionTool).optional(),
  tool_choice: toolChoice.optional(),
  parallel_tool_calls: z.boolean().optional(),
  stream: z.boolean().nullable().optional(),
  stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullable().optional(),
  max_tokens: positiveInt.nullable().optional(),
  max_completion_tokens: positiveInt.nullable().optional(),
  n: z.literal(1, 'the emulator serves one choice per request (n = 1)').nullable().optional(),
  stop: z
    .union([z.string(), z.array(z.string()).max(4)])
    .nullable()
    .optional(),
  temperature: z.number().min(0).max(2).nullable().optional(),
  top_p: z.number().min(0).max(1).nullable().optional(),
  user: z.string().optional(),
  prompt_cache_key: z.string().optional(),
});

export type ChatRequest = z.output<typeof chatRequestSchema>;
export type ChatMessage = ChatRequest['messages'][number];
export type ChatTool = NonNullable<ChatRequest['tools']>[number];

/** OpenAI names a parameter as `messages.[2].content` in `error.param`; we use the same path form as the rest of forkcache. */
export function checkChatRequest(body: unknown): ChatRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw OpenAiError.invalid('the request body must be a JSON object', null);
  }
  const result = chatRequestSchema.safeParse(body);
  if (result.success) return body as ChatRequest;
  const issue = result.error.issues[0]!;
  const param = formatPath(issue.path);
  const missing = issue.code === 'invalid_type' && (issue as { input?: unknown }).input === undefined;
  throw OpenAiError.invalid(
    missing ? `Missing required parameter: '${param}'.` : `Invalid value for '${param}': ${issue.message}`,
    param,
    missing ? 'missing_required_parameter' : 'invalid_value',
  );
}
