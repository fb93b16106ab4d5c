import type Anthropic from '@anthropic-ai/sdk';
import type OpenAI from 'openai';
import type { ForkChild } from '../core/fork/layouts.ts';
import { childRequestBody, type PerRequest } from '../core/prefix/body.ts';
import { driftCheckedFetch } from '../core/prefix/drift.ts';
import type { CacheTtl } from '../core/wire/cache.ts';
import type { HeadEnd } from '../core/prefix/sab.ts';
import { createAnthropicClient } from './anthropic/client.ts';
import { isChatProvider, type ProviderId } from '../core/wire/providers.ts';
import { chatRequestBody } from './openai/body.ts';
import { createChatClient } from './openai/client.ts';
import { dialectOf } from '../core/prefix/chat-dialects.ts';
import { streamChatBytes } from './openai/stream.ts';
import { responsesRequestBody, streamResponsesBytes } from './openai/responses.ts';
import { pinToSlot } from './llama-cpp/pin-slot.ts';
import { streamMessageBytes } from './anthropic/send.ts';
import type { ModelTransport } from '../core/loop/transport.ts';

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

/** OpenAI's `prompt_cache_key` of a fan-out: one per frozen head (resume keeps it). */
export function cacheKeyOf(sha256: string): string {
  return `forkcache-${sha256.slice(0, 16)}`;
}

/**
 * A fork's request body on `provider`'s wire (`wire: 'responses'` on OpenAI): the frozen head's
 * bytes plus the child's suffix in that wire's format. `cacheKey`: OpenAI's `prompt_cache_key`
 * the run sends (`cacheKeyOf`). The run's wire and the dry run's byte counts both build them here.
 */
export function forkBodyOf(
  prefix: WirePrefix,
  provider: ProviderId,
  wire: ApiEndpoint['wire'],
  cacheKey: string | undefined,
): ForkWire['body'] {
  if (!isChatProvider(provider))
    return (child, perRequest, marker) => childRequestBody(prefix, child, perRequest, { marker });
  // the child's own marker is not sent on the Responses API: the implicit breakpoint covers its latest message
  if (provider === 'openai' && wire === 'responses')
    return (child, perRequest) => responsesRequestBody(prefix, child, perRequest, cacheKey);
  const dialect = dialectOf(provider);
  return (child, perRequest, marker) => chatRequestBody(prefix, child, perRequest, { dialect, marker, cacheKey });
}

/**
 * A fork's request body as `api` sends it: `forkBodyOf` with the cache key the run sends (a Chat
 * provider's `prompt_cache_key`; none on Anthropic). The worker's wire and the engine's thread
 * (the spend cap's look at a queued fork's first request) both build it here.
 */
export function wireBodyOf(api: Pick<ApiEndpoint, 'provider' | 'wire'>, prefix: WirePrefix): ForkWire['body'] {
  const provider = api.provider ?? 'anthropic';
  return forkBodyOf(prefix, provider, api.wire, isChatProvider(provider) ? cacheKeyOf(prefix.sha256) : undefined);
}

// One SDK client per (prefix, endpoint) and thread: the drift check is bound to the prefix.
const clients = new Map<string, Anthropic | OpenAI>();

function cached<T extends Anthropic | OpenAI>(key: string, make: () => T): T {
  let client = clients.get(key) as T | undefined;
  if (!client) {
    if (clients.size >= 32) clients.delete(clients.keys().next().value!);
    client = make();
    clients.set(key, client);
  }
  return client;
}

/** The wire of one fork: its provider's body layout and transport, behind the drift check. */
export function openForkWire(api: ApiEndpoint, prefix: WirePrefix): ForkWire {
  const provider = api.provider ?? 'anthropic';
  const key = `${provider}${api.wire === 'responses' ? '/responses' : ''}\n${prefix.sha256}\n${api.baseURL}\n${api.apiKey}\n${JSON.stringify(api.headers)}`;
  const common = {
    baseURL: api.baseURL,
    apiKey: api.apiKey,
    maxRetries: api.maxRetries,
    timeoutMs: api.timeoutMs,
    defaultHeaders: api.headers,
  };
  const prefixId = prefix.sha256.slice(0, 16);
  if (!isChatProvider(provider)) {
    const client = cached(key, () =>
      createAnthropicClient({ ...common, fetch: driftCheckedFetch({ head: prefix.head, prefixId }) }),
    );
    return {
      provider,
      body: wireBodyOf(api, prefix),
      transport: { send: (body, options) => streamMessageBytes(client, body, options) },
    };
  }
  if (provider === 'openai' && api.wire === 'responses') {
    const client = cached(key, () =>
      createChatClient({
        provider,
        ...common,
        fetch: driftCheckedFetch({ head: prefix.head, prefixId, path: '/responses' }),
      }),
    );
    return {
      provider,
      body: wireBodyOf(api, prefix),
      transport: { send: (body, options) => streamResponsesBytes(client, body, options) },
    };
  }
  const client = cached(key, () =>
    createChatClient({
      provider,
      ...common,
      fetch: driftCheckedFetch({ head: prefix.head, prefixId, path: '/chat/completions' }),
    }),
  );
  return {
    provider,
    body: wireBodyOf(api, prefix),
    // the slot is the permit's, known only once the request may leave: it goes into the suffix
    transport: {
      send: (body, options) =>
        streamChatBytes(client, options.slot === undefined ? body : pinToSlot(body, options.slot), options),
    },
  };
}
