import { describe, expect, it } from 'vitest';
import type Anthropic from '@anthropic-ai/sdk';
import { cachedClient } from '../../src/providers/fork-wire.ts';
import { createAnthropicClient } from '../../src/providers/anthropic/client.ts';
import type { ApiEndpoint, WirePrefix } from '../../src/core/loop/transport.ts';

const PREFIX: WirePrefix = { head: new Uint8Array([123]), headEnd: 'content-open', sha256: 'a'.repeat(64) };
const API: ApiEndpoint = {
  provider: 'anthropic',
  baseURL: 'http://127.0.0.1:9',
  apiKey: 'sk-test',
  maxRetries: 0,
  timeoutMs: 600_000,
  headers: {},
};

describe("a thread's SDK clients (cachedClient)", () => {
  it('one client per prefix and client options: an engine with other retries or a timeout of its own gets its own', () => {
    // a thread serves engine after engine (src/core/pool/thread-pool.ts): under admission the
    // SDK must not retry (maxRetries 0), without it, it may; neither may get the other's client
    let made = 0;
    const make = (api: ApiEndpoint) => (): Anthropic => (made++, createAnthropicClient({ ...api }));
    const first = cachedClient(API, PREFIX, make(API));
    expect(cachedClient(API, PREFIX, make(API))).toBe(first);
    expect(made).toBe(1);
    for (const other of [
      { ...API, maxRetries: 2 },
      { ...API, timeoutMs: 1000 },
      { ...API, apiKey: 'sk-other' },
      { ...API, baseURL: 'http://127.0.0.1:10' },
      { ...API, headers: { 'anthropic-beta': 'x' } },
    ]) {
      const client = cachedClient(other, PREFIX, make(other));
      expect(client).not.toBe(first);
      expect(client.maxRetries).toBe(other.maxRetries);
    }
    expect(made).toBe(6);
  });
});
