import type { ProviderAdapter } from '../../core/engine/provider.ts';
import { cacheKeyOf } from '../../core/loop/transport.ts';
import { childRequestBody } from '../../core/prefix/body.ts';
import { driftCheckedFetch } from '../../core/prefix/drift.ts';
import { cachedClient, clientOptionsOf } from '../fork-wire.ts';
import { createAnthropicClient } from './client.ts';
import { streamMessageBytes } from './send.ts';
import { anthropicConnection } from './warmup.ts';

/** The Messages API: the head as Anthropic's request JSON, streamed through the Anthropic SDK. */
export const anthropicAdapter: ProviderAdapter = {
  id: 'anthropic',
  // the cache entry is readable once `message_start` arrives
  readability: 'response-start',
  cacheStepTokens: 1,
  local: false,
  endpoint: {
    title: 'Anthropic',
    keyEnv: ['ANTHROPIC_API_KEY'],
    baseUrlEnv: ['ANTHROPIC_BASE_URL'],
    defaultBaseURL: 'https://api.anthropic.com',
  },
  forkBody: (prefix) => (child, perRequest, marker) => childRequestBody(prefix, child, perRequest, { marker }),
  openForkWire(api, prefix) {
    const client = cachedClient(api, prefix, () =>
      createAnthropicClient({
        ...clientOptionsOf(api),
        fetch: driftCheckedFetch({ head: prefix.head, prefixId: prefix.sha256.slice(0, 16) }),
      }),
    );
    return {
      provider: 'anthropic',
      body: anthropicAdapter.forkBody(prefix, api.wire, cacheKeyOf(prefix.sha256)),
      transport: { send: (body, options) => streamMessageBytes(client, body, options) },
    };
  },
  connect: (api, client) =>
    anthropicConnection(client ?? createAnthropicClient({ ...api, defaultHeaders: api.headers })),
};
