import type Anthropic from '@anthropic-ai/sdk';
import type { ForkChild } from '../fork/layouts.ts';
import type { PerRequest } from '../prefix/body.ts';
import type { HeadEnd } from '../prefix/sab.ts';
import type { RateLimitHeaders } from '../rate-limits/headers.ts';
import type { CacheTtl } from '../wire/cache.ts';
import type { ProviderId } from '../wire/providers.ts';

/**
 * The contract between one fork's loop and its provider's transport (`ProviderAdapter`'s fork
 * wire): the loop hands over request bytes and gets back the provider-neutral message (text and
 * tool_use blocks, stop reason, usage), whichever wire the bytes went out on.
 */
export interface SendOptions {
  signal?: AbortSignal | undefined;
  /**
   * Called once, when the response has begun (`message_start`): its cache writes are now
   * readable. `rateLimits`: the response's `anthropic-ratelimit-*` headers.
   */
  onStart?: ((message: Anthropic.Message, rateLimits: RateLimitHeaders) => void) | undefined;
  /** Extra headers for this request only (e.g. the emulator's script selection). */
  headers?: Record<string, string> | undefined;
  /** llama.cpp: the server slot the permit named for this request (`id_slot`, in the suffix). */
  slot?: number | undefined;
}

/** How a fork sends one request body: the SDK in production, the same SDK against the emulator in tests. */
export interface ModelTransport {
  send(body: Uint8Array, options: SendOptions): Promise<SentMessage>;
}

export interface SentMessage {
  message: Anthropic.Message;
  requestId: string | null;
  /** The response's `anthropic-ratelimit-*` headers (empty when the endpoint sends none). */
  rateLimits?: RateLimitHeaders | undefined;
}

const STARTED = Symbol.for('forkcache.startedMessage');

/**
 * Marks `err`, thrown by a streamed request after its response began, with the `message_start`
 * snapshot (`startedMessageOf`). A transport calls it before rethrowing.
 */
export function markStarted(err: unknown, started: Anthropic.Message): void {
  if (typeof err === 'object' && err !== null)
    Object.defineProperty(err, STARTED, { value: started, enumerable: false });
}

/**
 * The `message_start` snapshot of a streamed request that failed after its response began, if
 * any. The endpoint bills such an attempt (its input, cache reads and writes, and what output
 * had been reported): the ledger records it with this usage.
 */
export function startedMessageOf(err: unknown): Anthropic.Message | undefined {
  return typeof err === 'object' && err !== null
    ? ((err as Record<symbol, unknown>)[STARTED] as Anthropic.Message | undefined)
    : undefined;
}

/** Where requests go, as the engine resolved it (the key is never logged or written). */
export interface ApiEndpoint {
  provider?: ProviderId | undefined;
  /** OpenAI's Responses API instead of Chat Completions (the head was frozen for it). */
  wire?: 'responses' | undefined;
  baseURL: string;
  apiKey: string;
  maxRetries: number;
  timeoutMs: number;
  headers: Record<string, string>;
}

/** A frozen head as a worker holds it. */
export interface WirePrefix {
  readonly head: Uint8Array;
  readonly headEnd: HeadEnd;
  readonly sha256: string;
}

/**
 * The provider boundary as one fork's loop sees it: request bodies are the frozen head bytes
 * plus this child's suffix in the provider's own format, and the transport sends them and
 * answers with the provider-neutral message (text and tool_use blocks, stop reason, usage as
 * uncached/written/read/output). What the loop, the gate and the ledger do never depends on
 * which provider it is.
 */
export interface ForkWire {
  readonly provider: ProviderId;
  body(child: ForkChild, perRequest: PerRequest, marker: CacheTtl | false): Uint8Array;
  readonly transport: ModelTransport;
}

/** Opens one fork's wire: its provider's adapter (`ProviderAdapter.openForkWire`), chosen by `api.provider`. */
export type OpenForkWire = (api: ApiEndpoint, prefix: WirePrefix) => ForkWire;

/**
 * A fan-out's cache key (OpenAI's `prompt_cache_key`, on the providers that take one): one per
 * frozen head, so a resume keeps it.
 */
export function cacheKeyOf(sha256: string): string {
  return `forkcache-${sha256.slice(0, 16)}`;
}
