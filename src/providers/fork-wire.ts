import type Anthropic from '@anthropic-ai/sdk';
import type OpenAI from 'openai';
import type { ApiEndpoint, WirePrefix } from '../core/loop/transport.ts';

// One SDK client per (prefix, endpoint) and thread: the drift check is bound to the prefix.
const clients = new Map<string, Anthropic | OpenAI>();

/**
 * The SDK client of one fork's wire, made once per (provider, wire, prefix, endpoint) in this
 * thread (`make` gets the client options; each adapter wraps its `fetch` in the drift check).
 */
export function cachedClient<T extends Anthropic | OpenAI>(api: ApiEndpoint, prefix: WirePrefix, make: () => T): T {
  const provider = api.provider ?? 'anthropic';
  // every client option is in the key: a thread serves engines made with other retries or timeouts in turn
  const key = `${provider}${api.wire === 'responses' ? '/responses' : ''}\n${prefix.sha256}\n${JSON.stringify(clientOptionsOf(api))}`;
  let client = clients.get(key) as T | undefined;
  if (!client) {
    if (clients.size >= 32) clients.delete(clients.keys().next().value!);
    client = make();
    clients.set(key, client);
  }
  return client;
}

/** The client options of a fork's wire, as the engine resolved its endpoint. */
export function clientOptionsOf(api: ApiEndpoint) {
  return {
    baseURL: api.baseURL,
    apiKey: api.apiKey,
    maxRetries: api.maxRetries,
    timeoutMs: api.timeoutMs,
    defaultHeaders: api.headers,
  };
}
