import type Anthropic from '@anthropic-ai/sdk';
import { APIConnectionError } from '@anthropic-ai/sdk';
import { MessageStream } from '@anthropic-ai/sdk/lib/MessageStream';
import type { Stream } from '@anthropic-ai/sdk/core/streaming';
import { parseRateLimitHeaders } from '../../core/rate-limits/headers.ts';
import { markStarted, type SendOptions, type SentMessage } from '../../core/loop/transport.ts';

const JSON_HEADERS = { 'content-type': 'application/json' };

/**
 * A request that may be billed is never resent by the SDK, whatever the client's `maxRetries`:
 * from 1.17 the SDK sends a request again when its connection drops part-way through the body,
 * and that response may have been a 2xx the API billed, unseen by the ledger. forkcache
 * retries such requests itself (the loop's turn retries), each attempt in the ledger.
 */
export const BILLED_REQUEST_RETRIES = { maxRetries: 0 } as const;

/**
 * Send exact request bytes, streaming, and return the assembled message. The SDK's own
 * `MessageStream` assembles the events (text deltas, partial tool-input JSON, usage);
 * `message_start` is reported through `onStart` as it arrives.
 */
export async function streamMessageBytes(
  client: Anthropic,
  body: Uint8Array,
  options: SendOptions = {},
): Promise<SentMessage> {
  const { data, request_id, response } = await client
    .post<Stream<Anthropic.RawMessageStreamEvent>>('/v1/messages', {
      body,
      headers: { ...JSON_HEADERS, ...options.headers },
      stream: true,
      ...BILLED_REQUEST_RETRIES,
      ...(options.signal ? { signal: options.signal } : {}),
    })
    .withResponse();
  const rateLimits = parseRateLimitHeaders(response.headers);
  const stream = MessageStream.fromReadableStream(data.toReadableStream());
  const onAbort = (): void => {
    data.controller.abort();
    stream.abort();
  };
  options.signal?.addEventListener('abort', onAbort, { once: true });
  let started: Anthropic.Message | undefined;
  try {
    stream.on('streamEvent', (event, snapshot) => {
      if (event.type !== 'message_start') return;
      started = structuredClone(snapshot);
      options.onStart?.(snapshot, rateLimits);
    });
    return { message: await stream.finalMessage(), requestId: request_id ?? null, rateLimits };
  } catch (err) {
    if (started) markStarted(err, started);
    throw err;
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
  }
}

const BILLED_UNREAD = Symbol.for('forkcache.billedUnread');

/**
 * Whether `err` is a non-streamed request whose 2xx response began and whose body was then cut
 * (`sendMessageBytes`). The endpoint billed it (the message was complete when its bytes began
 * to leave), but its usage never arrived: the caller records what it knows of it.
 */
export function billedUnreadOf(err: unknown): { requestId: string | null } | undefined {
  return typeof err === 'object' && err !== null
    ? ((err as Record<symbol, unknown>)[BILLED_UNREAD] as { requestId: string | null } | undefined)
    : undefined;
}

/**
 * Send exact bytes without streaming (pre-warm requests with `max_tokens: 0`, which cannot
 * stream). The body is read here, not by the SDK: a 2xx whose body is cut on the way is then
 * told apart from a request that never got an answer (`billedUnreadOf`).
 */
export async function sendMessageBytes(
  client: Anthropic,
  body: Uint8Array,
  options: SendOptions = {},
): Promise<SentMessage> {
  const response = await client
    .post<Anthropic.Message>('/v1/messages', {
      body,
      headers: { ...JSON_HEADERS, ...options.headers },
      ...BILLED_REQUEST_RETRIES,
      ...(options.signal ? { signal: options.signal } : {}),
    })
    .asResponse();
  const requestId = response.headers.get('request-id');
  let data: Anthropic.Message;
  try {
    data = JSON.parse(await response.text()) as Anthropic.Message;
  } catch (cause) {
    const err = new APIConnectionError({
      message: `the response body of ${requestId ?? 'a 2xx request'} was cut before it was read`,
      cause: cause instanceof Error ? cause : undefined,
    });
    // cancelled while its body was on the way: the cancellation is what the caller sees, billed all the same
    const thrown = options.signal?.aborted && cause instanceof Error ? cause : err;
    Object.defineProperty(thrown, BILLED_UNREAD, { value: { requestId }, enumerable: false });
    throw thrown;
  }
  const rateLimits = parseRateLimitHeaders(response.headers);
  options.onStart?.(data, rateLimits);
  return { message: data, requestId, rateLimits };
}

/** Exact token count of a request body (`POST /v1/messages/count_tokens`). */
export async function countTokensBytes(
  client: Anthropic,
  body: Uint8Array,
  options: SendOptions = {},
): Promise<number> {
  const result = await client.post<{ input_tokens: number }>('/v1/messages/count_tokens', {
    body,
    headers: { ...JSON_HEADERS, ...options.headers },
    ...(options.signal ? { signal: options.signal } : {}),
  });
  return result.input_tokens;
}
