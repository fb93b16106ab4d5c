import type Anthropic from '@anthropic-ai/sdk';
import type OpenAI from 'openai';
import type { Stream } from 'openai/core/streaming';
import type { ChatCompletion, ChatCompletionChunk } from 'openai/resources/chat/completions';
import { parseRateLimitHeaders } from '../../core/rate-limits/headers.ts';
import { BILLED_REQUEST_RETRIES } from '../anthropic/send.ts';
import type { SendOptions, SentMessage } from '../../core/loop/transport.ts';
import { engineTimings } from './usage.ts';
import { type ChatUsage, fromChatUsage } from '../../core/ledger/chat-usage.ts';

const JSON_HEADERS = { 'content-type': 'application/json' };

const STOP_REASONS: Record<string, Anthropic.StopReason> = {
  stop: 'end_turn',
  tool_calls: 'tool_use',
  function_call: 'tool_use',
  length: 'max_tokens',
  content_filter: 'refusal',
};

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

interface Assembled {
  id: string;
  model: string;
  text: string;
  calls: { id: string; name: string; args: string }[];
  finish: string | null;
  usage: ChatUsage | null | undefined;
  /** llama.cpp's `timings` (beside `usage`): the engine's own prompt and generation times. */
  timings?: unknown;
}

/**
 * A Chat Completions answer in the provider-neutral shape the loop, the transcripts and the
 * ledger read (Anthropic's message: text and tool_use blocks, a stop reason, usage as
 * uncached/written/read/output): what the loop does next never depends on the wire.
 */
export function toNeutralMessage(a: Assembled): Anthropic.Message {
  const content: Anthropic.ContentBlock[] = [];
  if (a.text !== '') content.push({ type: 'text', text: a.text, citations: null });
  for (const call of a.calls)
    content.push({
      type: 'tool_use',
      id: call.id,
      name: call.name,
      input: parseArguments(call.args),
    } as Anthropic.ToolUseBlock);
  const stop = a.finish === null ? null : (STOP_REASONS[a.finish] ?? 'end_turn');
  return {
    id: a.id,
    type: 'message',
    role: 'assistant',
    model: a.model,
    content,
    stop_reason: stop,
    stop_sequence: null,
    usage: { ...fromChatUsage(a.usage), ...engineTimings(a.timings) },
  } as unknown as Anthropic.Message;
}

/**
 * Send exact bytes to `POST …/chat/completions`, streaming (`stream_options.include_usage`:
 * the usage arrives in the last chunk), and assemble the answer. The SDK passes a typed-array
 * body to `fetch` untouched, as Anthropic's does. `onStart` fires with the first chunk; on
 * these providers that is not yet when the cache entry is readable (the gate waits for the end).
 */
export async function streamChatBytes(
  client: OpenAI,
  body: Uint8Array,
  options: SendOptions = {},
): Promise<SentMessage> {
  const { data, request_id, response } = await client
    .post<Stream<ChatCompletionChunk>>('/chat/completions', {
      body,
      headers: { ...JSON_HEADERS, ...options.headers },
      stream: true,
      ...BILLED_REQUEST_RETRIES,
      ...(options.signal ? { signal: options.signal } : {}),
    })
    .withResponse();
  const rateLimits = parseRateLimitHeaders(response.headers);
  const a: Assembled = { id: '', model: '', text: '', calls: [], finish: null, usage: undefined };
  const byIndex = new Map<number, Assembled['calls'][number]>();
  let started = false;
  for await (const chunk of data) {
    if (!started) {
      started = true;
      a.id = chunk.id;
      a.model = chunk.model;
      options.onStart?.(toNeutralMessage(a), rateLimits);
    }
    if (chunk.usage) a.usage = chunk.usage as ChatUsage;
    if ('timings' in chunk) a.timings = chunk.timings;
    const choice = chunk.choices[0];
    if (!choice) continue;
    if (typeof choice.delta.content === 'string') a.text += choice.delta.content;
    for (const delta of choice.delta.tool_calls ?? []) {
      let call = byIndex.get(delta.index);
      if (!call) {
        call = { id: delta.id ?? '', name: '', args: '' };
        byIndex.set(delta.index, call);
        a.calls.push(call);
      }
      if (delta.id) call.id = delta.id;
      if (delta.function?.name) call.name += delta.function.name;
      if (delta.function?.arguments) call.args += delta.function.arguments;
    }
    if (choice.finish_reason) a.finish = choice.finish_reason;
  }
  return { message: toNeutralMessage(a), requestId: request_id ?? null, rateLimits };
}

/** Send exact bytes without streaming (the warm-up that also measures the shared prefix). */
export async function sendChatBytes(client: OpenAI, body: Uint8Array, options: SendOptions = {}): Promise<SentMessage> {
  const { data, request_id, response } = await client
    .post<ChatCompletion>('/chat/completions', {
      body,
      headers: { ...JSON_HEADERS, ...options.headers },
      ...BILLED_REQUEST_RETRIES,
      ...(options.signal ? { signal: options.signal } : {}),
    })
    .withResponse();
  const choice = data.choices[0];
  const message = toNeutralMessage({
    id: data.id,
    model: data.model,
    text: choice?.message.content ?? '',
    calls: (choice?.message.tool_calls ?? []).flatMap((c) =>
      c.type === 'function' ? [{ id: c.id, name: c.function.name, args: c.function.arguments }] : [],
    ),
    finish: choice?.finish_reason ?? null,
    usage: data.usage as ChatUsage | undefined,
    timings: (data as { timings?: unknown }).timings,
  });
  const rateLimits = parseRateLimitHeaders(response.headers);
  options.onStart?.(message, rateLimits);
  return { message, requestId: request_id ?? null, rateLimits };
}
