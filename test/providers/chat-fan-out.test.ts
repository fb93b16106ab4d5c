import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EmulatorApi } from '../../src/integrations/emulator/openai/rules.ts';
import { startEmulator } from '../../src/integrations/emulator/start.ts';
import { ForkEngine } from '../../src/core/engine/engine.ts';
import type { ProviderId } from '../../src/core/wire/providers.ts';
import { bigSnapshot, workspace } from '../core/engine/helpers.ts';

type Emulator = Awaited<ReturnType<typeof startEmulator>>;
const emulators = new Map<EmulatorApi, Emulator>();

beforeAll(async () => {
  for (const api of ['dashscope', 'openai'] as const) emulators.set(api, await startEmulator({ latency: 'off', api }));
});
afterAll(async () => {
  for (const emulator of emulators.values()) await emulator.close();
});

const DIRECTIVES = ['read a.ts and report', 'read b.ts and report', 'read c.ts and report', 'read d.ts and report'];

/** One fan-out through real worker threads and the real openai client to the emulator in the provider's mode. */
async function fanOut(provider: ProviderId, api: EmulatorApi, layout: 'claude' | 'qwen', tag: string) {
  const emulator = emulators.get(api)!;
  const order: string[] = [];
  const offStart = emulator.on('request-start', (e) => order.push(`start ${e.requestId}`));
  const offEnd = emulator.on('request-end', (e) => order.push(`end ${e.requestId}`));
  const engine = await ForkEngine.create({
    provider,
    baseURL: `${emulator.url}/v1`,
    apiKey: 'test',
    workspace: workspace(),
    pool: { maxThreads: 2 },
    layout,
  });
  try {
    const result = await engine.fanOut(bigSnapshot(tag), DIRECTIVES).settled();
    return { result, order };
  } finally {
    offStart();
    offEnd();
    await engine.close();
  }
}

describe('a fan-out on a Chat Completions provider', () => {
  it('DashScope (explicit markers, qwen layout): the warm-up completes before any child is sent, and every child reads the whole shared prefix', async () => {
    const { result, order } = await fanOut('dashscope', 'dashscope', 'qwen', `ds-${Date.now()}:`);
    expect(result.forks.map((f) => f.status)).toEqual(['completed', 'completed', 'completed', 'completed']);
    const shared = result.summary.prefix.shared_tokens!;
    expect(shared).toBeGreaterThan(3000);
    for (const fork of result.forks) expect(fork.requests[0]!.usage.cache_read_input_tokens).toBe(shared);
    // the rule on this provider: readable once the creating response has completed
    expect(order[0]).toMatch(/^start /);
    expect(order[1]).toBe(order[0]!.replace('start', 'end'));
    expect(result.summary.cache.cache_efficiency).toBeGreaterThanOrEqual(0.99);
    expect(result.summary.warmups).toBe(1);
    expect(result.summary.prefix.drift_events).toBe(0);
  });

  it('OpenAI (automatic caching in 128-token steps, claude layout): hits within one step of the shared prefix, efficiency ≥ 0.99', async () => {
    const { result } = await fanOut('openai', 'openai', 'claude', `oa-${Date.now()}:`);
    expect(result.forks.every((f) => f.status === 'completed')).toBe(true);
    const shared = result.summary.prefix.shared_tokens!;
    for (const fork of result.forks) {
      const read = fork.requests[0]!.usage.cache_read_input_tokens;
      expect(read % 128).toBe(0);
      expect(shared - read).toBeLessThan(128);
      expect(fork.requests[0]!.usage.cache_creation_input_tokens).toBe(0);
    }
    expect(result.summary.cache.cache_efficiency).toBeGreaterThanOrEqual(0.99);
  });
});
