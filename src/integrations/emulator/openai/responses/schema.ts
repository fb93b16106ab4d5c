import { z } from 'zod';
import { formatPath } from '../../../../core/util/validation.ts';
import { RESPONSES_CACHE_TTLS } from '../../../../core/wire/cache.ts';
import { OpenAiError } from '../errors.ts';

/*
 * The structure of a Responses API request (`POST /v1/responses`), checked as loosely as the
 * Chat schema beside it: unknown top-level fields are accepted and ignored, the parts that
 * make the prompt are strict. The body is kept as received: the cache hashes the client's bytes.
 */

/** `prompt_cache_breakpoint` on a content part (openai-node's `PromptCacheBreakpoint`). */
const breakpoint = z.strictObject({ mode: z.literal('explicit') }).nullish();

const inputText = z.looseObject({
  type: z.literal('input_text'),
  text: z.string(),
  prompt_cache_breakpoint: breakpoint,
});
const inputImage = z.looseObject({
  type: z.literal('input_image'),
  image_url: z.string().nullish(),
  prompt_cache_breakpoint: breakpoint,
});
const inputFile = z.looseObject({ type: z.literal('input_file'), prompt_cache_breakpoint: breakpoint });
const outputText = z.looseObject({ type: z.literal('output_text'), text: z.string() });
const refusal = z.looseObject({ type: z.literal('refusal'), refusal: z.string() });
const part = z.discriminatedUnion('type', [inputText, inputImage, inputFile, outputText, refusal]);
const content = z.union([z.string(), z.array(part)]);

const messageItem = z.looseObject({
  type: z.literal('message').optional(),
  role: z.enum(['user', 'system', 'developer', 'assistant']),
  content,
});
const functionCall = z.looseObject({
  type: z.literal('function_call'),
  call_id: z.string().min(1),
  name: z.string().min(1),
  arguments: z.string(),
});
const functionCallOutput = z.looseObject({
  type: z.literal('function_call_output'),
  call_id: z.string().min(1),
  output: z.union([z.string(), z.array(part)]),
});
const item = z.union([messageItem, functionCall, functionCallOutput]);

const functionTool = z.looseObject({
  type: z.literal('function'),
  name: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, 'string should match pattern ^[a-zA-Z0-9_-]{1,64}$'),
  description: z.string().nullish(),
  parameters: z.looseObject({}).nullish(),
  strict: z.boolean().nullish(),
});

const toolChoice = z.union([
  z.enum(['none', 'auto', 'required']),
  z.looseObject({ type: z.literal('function'), name: z.string().min(1) }),
]);

/**
 * `prompt_cache_options`: the TTL (a minimum lifetime per breakpoint), `prewarm` (write the
 * prefix, generate nothing), `mode` (`explicit`: no implicit breakpoint) and
 * `comparison_response_id` (compare this prompt with an earlier response's).
 */
const promptCacheOptions = z.strictObject({
  ttl: z.enum(RESPONSES_CACHE_TTLS).optional(),
  prewarm: z.boolean().optional(),
  mode: z.enum(['implicit', 'explicit']).optional(),
  comparison_response_id: z.string().min(1).optional(),
});

export const responsesRequestSchema = z.looseObject({
  model: z.string().min(1),
  input: z.union([z.string(), z.array(item).min(1)]),
  instructions: z.string().nullish(),
  tools: z.array(functionTool).optional(),
  tool_choice: toolChoice.optional(),
  parallel_tool_calls: z.boolean().nullish(),
  stream: z.boolean().nullish(),
  max_output_tokens: z.number().int().positive().nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().min(0).max(1).nullish(),
  store: z.boolean().nullish(),
  prompt_cache_key: z.string().nullish(),
  prompt_cache_options: promptCacheOptions.nullish(),
  // the emulator keeps no conversations: a request must carry its whole prompt
  previous_response_id: z.null().optional(),
  conversation: z.null().optional(),
});

export type ResponsesRequest = z.output<typeof responsesRequestSchema>;
export type ResponsesItem = Exclude<ResponsesRequest['input'], string>[number];
export type ResponsesPart = Exclude<z.output<typeof content>, string>[number];
export type ResponsesTool = NonNullable<ResponsesRequest['tools']>[number];

/** Check a body; a 400 in OpenAI's words names the first bad field (`input[2].content[0].text`). */
export function checkResponsesRequest(body: unknown): ResponsesRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw OpenAiError.invalid('the request body must be a JSON object', null);
  }
  const result = responsesRequestSchema.safeParse(body);
  if (result.success) return body as ResponsesRequest;
  const issue = result.error.issues[0]!;
  const param = formatPath(issue.path);
  const missing = issue.code === 'invalid_type' && (issue as { input?: unknown }).input === undefined;
  if (param === 'previous_response_id' || param === 'conversation')
    throw OpenAiError.invalid(
      `'${param}' is not supported by the emulator: it keeps no conversations, send the whole input`,
      param,
      'unsupported_parameter',
    );
  throw OpenAiError.invalid(
    missing ? `Missing required parameter: '${param}'.` : `Invalid value for '${param}': ${issue.message}`,
    param,
    missing ? 'missing_required_parameter' : 'invalid_value',
  );
}
