import type Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import type { Stream } from 'openai/core/streaming';
import type { ForkChild } from '../../core/fork/layouts.ts';
import { ForkcacheError } from '../../core/util/errors.ts';
import { fromResponsesUsage, type ResponsesUsage } from '../../core/ledger/responses-usage.ts';
import { withSuffix, type PerRequest } from '../../core/prefix/body.ts';
import {
  cacheOptionsMember,
  serializeResponsesSuffix,
  type ResponsesCacheOptions,
} from '../../core/prefix/responses-head.ts';
import type { HeadEnd } from '../../core/prefix/sab.ts';
import { parseRateLimitHeaders } from '../../core/rate-limits/headers.ts';
import { BILLED_REQUEST_RETRIES } from '../anthropic/send.ts';
import type { SendOptions, SentMessage } from '../../core/loop/transport.ts';

const JSON_HEADERS = { 'content-type': 'application/json' };

/** The per-request fields of a Responses body, from the loop's neutral ones. */
function responsesPerRequest(perRequest: PerRequest, cacheKey: string | undefined): Record<string, unknown> {
  const { max_tokens: maxTokens, stream, ...rest } = perRequest;
  if (!Number.isInteger(maxTokens) || maxTokens < 1) {
    throw new ForkcacheError(
      'INVALID_OPTION',
      `perRequest.max_tokens: expected a positive integer on the Responses API, got ${String(maxTokens)}`,
      { data: { field: 'perRequest.max_tokens' } },
    );
  }
  return {
    max_output_tokens: maxTokens,
    ...rest,
    ...(stream ? { stream: true } : {}),
    // routing, not content: one key per fan-out keeps siblings on the machines that hold the prefix
    ...(cacheKey === undefined ? {} : { prompt_cache_key: cacheKey }),
  };
}

/** A child's Responses body: the frozen head bytes, unchanged, then its suffix. */
export function responsesRequestBody(
  prefix: { readonly head: Uint8Array; readonly headEnd: HeadEnd },
  child: ForkChild,
  perRequest: PerRequest,
  cacheKey: string | undefined,
): Uint8Array {
  return withSuffix(
    prefix.head,
    serializeResponsesSuffix(prefix.headEnd, child, responsesPerRequest(perRequest, cacheKey)),
  );
}

const PROBE_ITEM = '{"role":"user","content":"x"}';
const decoder = new TextDecoder();
const encoder = new TextEncoder();

/**
 * The warm-up of a Responses fan-out: the head closed at the shared boundary, with
 * `prompt_cache_options.prewarm: true` — the API fills the cache and generates nothing (no
 * output tokens paid; the twin of the Messages API's `max_tokens: 0`). The options member is
 * the only bytes that differ from the children's head: cache options are not prompt, so the
 * entries it writes are the ones the children read. Its usage measures the shared prefix.
 */
export function prewarmBody(
  prefix: { readonly head: Uint8Array; readonly headEnd: HeadEnd; readonly responses?: ResponsesCacheOptions },
  cacheKey: string | undefined,
): Uint8Array {
  if (!prefix.responses) throw new ForkcacheError('INTERNAL', 'a prewarm needs a head frozen for the Responses API');
  const head = decoder.decode(prefix.head);
  const member = cacheOptionsMember(prefix.responses);
  const at = head.indexOf(member);
  if (at < 0) throw new ForkcacheError('INTERNAL', 'the Responses head has no prompt_cache_options member');
  const swapped =
    head.slice(0, at) + cacheOptionsMember(prefix.responses, { prewarm: true }) + head.slice(at + member.length);
  const close =
    prefix.headEnd === 'content-open' ? ']}]' : prefix.headEnd === 'message-closed' ? ']' : `${PROBE_ITEM}]`;
  const key = cacheKey === undefined ? '' : `,"prompt_cache_key":${JSON.stringify(cacheKey)}`;
  return encoder.encode(`${swapped}${close}${key}}`);
}

interface ResponseObject {
  id: string;
  model: string;
  status?: string;
  incomplete_details?: { reason?: string } | null;
  output?: ({ type: string } & Record<string, unknown>)[];
  usage?: ResponsesUsage | null;
}

/** The model's tool-call arguments as an object; a call cut off mid-JSON keeps what it has as `{}`. */
function parseArguments(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text === '' ? '{}' : text);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

/**
 * A response in the provider-neutral shape the loop, the transcripts and the ledger read:
 * output text and `function_call` items as text and tool_use blocks, the stop reason
 * (`incomplete` for `max_output_tokens` is `max_tokens`), usage with writes by lifetime.
 */
function fromResponse(r: ResponseObject): Anthropic.Message {
  const content: Anthropic.ContentBlock[] = [];
  let text = '';
  for (const item of r.output ?? []) {
    if (item.type === 'message')
      for (const part of (item['content'] as { type: string; text?: string }[] | undefined) ?? [])
        if (part.type === 'output_text') text += part.text ?? '';
  }
  if (text !== '') content.push({ type: 'text', text, citations: null });
  for (const item of r.output ?? []) {
    if (item.type !== 'function_call') continue;
    content.push({
      type: 'tool_use',
      id: String(item['call_id']),
      name: String(item['name']),
      input: parseArguments(String(item['arguments'] ?? '')),
    } as Anthropic.ToolUseBlock);
  }
  const stop: Anthropic.StopReason | null =
    r.status === 'incomplete'
      ? r.incomplete_details?.reason === 'content_filter'
        ? 'refusal'
        : 'max_tokens'
      : r.status === 'in_progress'
        ? null
        : content.some((b) => b.type === 'tool_use')
          ? 'tool_use'
          : 'end_turn';
  return {
    id: r.id,
    type: 'message',
    role: 'assistant',
    model: r.model,
    content,
    stop_reason: stop,
    stop_sequence: null,
    usage: fromResponsesUsage(r.usage),
  } as unknown as Anthropic.Message;
}

type StreamEvent = { type: string; response?: ResponseObject; message?: string; code?: string | null };

/**
 * Send exact bytes to `POST …/responses`, streaming, and assemble the answer from
 * `response.completed` (or `response.incomplete`), which carries the whole response and its
 * usage. `onStart` fires with `response.created`; as on Chat Completions the entry is readable
 * only once the response is complete. An `error` or `response.failed` event throws the SDK's
 * `APIError`, as a Chat stream's error frame does.
 */
export async function streamResponsesBytes(
  client: OpenAI,
  body: Uint8Array,
  options: SendOptions = {},
): Promise<SentMessage> {
  const { data, request_id, response } = await client
    .post<Stream<StreamEvent>>('/responses', {
      body,
      headers: { ...JSON_HEADERS, ...options.headers },
      stream: true,
      ...BILLED_REQUEST_RETRIES,
      ...(options.signal ? { signal: options.signal } : {}),
    })
    .withResponse();
  const rateLimits = parseRateLimitHeaders(response.headers);
  let final: ResponseObject | undefined;
  for await (const event of data) {
    if (event.type === 'response.created' && event.response)
      options.onStart?.(fromResponse(event.response), rateLimits);
    else if ((event.type === 'response.completed' || event.type === 'response.incomplete') && event.response)
      final = event.response;
    else if (event.type === 'error' || event.type === 'response.failed') {
      const message = event.message ?? 'the response failed';
      throw new OpenAI.APIError(
        undefined,
        { message, type: 'server_error', code: event.code ?? null },
        message,
        response.headers,
      );
    }
  }
  if (!final)
    throw new OpenAI.APIError(
      undefined,
      undefined,
      'the response stream ended before response.completed',
      response.headers,
    );
  return { message: fromResponse(final), requestId: request_id ?? null, rateLimits };
}

/** Send exact bytes without streaming (the prewarm). */
export async function sendResponsesBytes(
  client: OpenAI,
  body: Uint8Array,
  options: SendOptions = {},
): Promise<SentMessage> {
  const { data, request_id, response } = await client
    .post<ResponseObject>('/responses', {
      body,
      headers: { ...JSON_HEADERS, ...options.headers },
      ...BILLED_REQUEST_RETRIES,
      ...(options.signal ? { signal: options.signal } : {}),
    })
    .withResponse();
  const message = fromResponse(data);
  const rateLimits = parseRateLimitHeaders(response.headers);
  options.onStart?.(message, rateLimits);
  return { message, requestId: request_id ?? null, rateLimits };
}
