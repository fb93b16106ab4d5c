import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator } from '../../src/integrations/emulator/start.ts';
import { ForkEngine } from '../../src/core/engine/engine.ts';
import type { ForkEngineOptions } from '../../src/core/engine/options.ts';
import { UsageLedger } from '../../src/core/ledger/ledger.ts';
import { freeze } from '../../src/core/prefix/freeze.ts';
import { createChatClient } from '../../src/providers/openai/client.ts';
import { PROVIDERS } from '../../src/providers/registry.ts';
import {
  prewarmBody,
  responsesRequestBody,
  sendResponsesBytes,
  streamResponsesBytes,
} from '../../src/providers/openai/responses.ts';
import { bigSnapshot, workspace } from '../core/engine/helpers.ts';

/*
 * A fan-out over OpenAI's Responses API, through real worker threads and the real `openai`
 * client to the emulator's OpenAI mode: the warm-up is a `prewarm` (no output tokens), every
 * child reads the whole shared prefix at its breakpoint, and the writes carry their TTL into
 * the ledger.
 */

type Emulator = Awaited<ReturnType<typeof startEmulator>>;
let emulator: Emulator;

beforeAll(async () => {
  emulator = await startEmulator({ latency: 'off', api: 'openai' });
});
afterAll(async () => {
  await emulator.close();
});

const DIRECTIVES = ['read a.ts and report', 'read b.ts and report', 'read c.ts and report', 'read d.ts and report'];

async function fanOut(tag: string, options: Partial<ForkEngineOptions> = {}) {
  const paths: string[] = [];
  const off = emulator.on('request-start', (e) => paths.push(e.messageId ?? ''));
  const engine = await ForkEngine.create({
    provider: 'openai',
    openaiWire: 'responses',
    baseURL: `${emulator.url}/v1`,
    apiKey: 'test',
    workspace: workspace(),
    pool: { maxThreads: 2 },
    ...options,
  });
  try {
    const ledger = new UsageLedger();
    const result = await engine.fanOut(bigSnapshot(tag), DIRECTIVES, { ledger }).settled();
    return { result, ids: paths, ledger };
  } finally {
    off();
    await engine.close();
  }
}

describe('a fan-out on the Responses API', () => {
  it('warms with a prewarm that pays no output tokens, and keeps cache efficiency at 1.000', async () => {
    const { result, ids, ledger } = await fanOut(`resp-${Date.now()}:`);
    expect(result.forks.map((f) => f.status)).toEqual(['completed', 'completed', 'completed', 'completed']);
    expect(ids.every((id) => id.startsWith('resp_'))).toBe(true);
    expect(result.summary.warmups).toBe(1);
    const warmup = ledger.records().find((r) => r.kind === 'warmup');
    expect(warmup).toBeDefined();
    expect(warmup!.usage.output_tokens).toBe(0);
    const shared = result.summary.prefix.shared_tokens!;
    expect(shared).toBeGreaterThan(3000);
    // the prewarm wrote the whole shared prefix, for the default 30 minutes
    expect(warmup!.usage.cache_creation_input_tokens).toBe(shared);
    expect(warmup!.usage.cache_creation?.ttl_30m_input_tokens).toBe(shared);
    for (const fork of result.forks) {
      // read at the breakpoint: exactly the shared prefix, not rounded to a 128-token step
      expect(fork.requests[0]!.usage.cache_read_input_tokens).toBe(shared);
    }
    expect(result.summary.cache.cache_efficiency).toBe(1);
    expect(result.summary.prefix.drift_events).toBe(0);
  });

  it('writes for 12 hours when asked, and the ledger keeps those writes apart', async () => {
    const { result, ledger } = await fanOut(`resp12-${Date.now()}:`, { responsesTtl: '12h' });
    expect(result.forks.every((f) => f.status === 'completed')).toBe(true);
    const shared = result.summary.prefix.shared_tokens!;
    const warmup = ledger.records().find((r) => r.kind === 'warmup')!;
    // what the earlier fan-out left cached (the system prompt and tools, at their breakpoint) is read
    expect(warmup.usage.cache_creation_input_tokens + warmup.usage.cache_read_input_tokens).toBe(shared);
    expect(warmup.usage.cache_creation?.ttl_12h_input_tokens).toBe(warmup.usage.cache_creation_input_tokens);
    expect(warmup.usage.output_tokens).toBe(0);
    expect(warmup.usage.cache_creation?.ttl_30m_input_tokens).toBeUndefined();
    const usage = ledger.summary().usage;
    const writes = usage.cache_creation;
    expect(writes.ttl_12h_input_tokens).toBe(usage.cache_creation_input_tokens);
    // the children's own suffixes were written too, for 12 hours like the prefix
    expect(writes.ttl_12h_input_tokens).toBeGreaterThan(warmup.usage.cache_creation_input_tokens);
    expect(writes.ttl_30m_input_tokens).toBeUndefined();
    expect(result.summary.cache.cache_efficiency).toBe(1);
  });
});

describe('a billed Responses request is never resent by the SDK', () => {
  it('a fork request and the prewarm are sent once, whatever the client’s maxRetries (the loop owns retries)', async () => {
    const failing = await startEmulator({ latency: 'off', api: 'openai', faultFor: () => '500' });
    try {
      const client = createChatClient({
        provider: PROVIDERS.openai,
        baseURL: `${failing.url}/v1`,
        apiKey: 'test',
        maxRetries: 3,
      });
      const prefix = freeze(bigSnapshot(`resp-retries-${Date.now()}:`), {
        provider: 'openai',
        responses: { ttl: '30m' },
      });
      const child = responsesRequestBody(
        prefix,
        prefix.child('read a.ts'),
        { max_tokens: 64, stream: true },
        undefined,
      );
      await expect(streamResponsesBytes(client, child)).rejects.toThrow();
      await expect(sendResponsesBytes(client, prewarmBody(prefix, undefined))).rejects.toThrow();
      // before: 4 sends each (1 + maxRetries)
      expect(failing.stats().requests.total).toBe(2);
    } finally {
      await failing.close();
    }
  });
});
