import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ForkEngine } from '../../../src/core/engine/engine.ts';
import { resolveEngineOptions } from '../../../src/core/engine/options.ts';
import { bigSnapshot, sharedEmulator, workspace } from './helpers.ts';

// The engine option `maxUsd` (the CLI's --max-usd and a plan's maxUsd go through it).
const emulator = sharedEmulator({ script: 'refactor' });
const FILES = Object.fromEntries(
  ['a', 'b', 'c', 'd', 'e', 'f'].map((n) => [`${n}.ts`, `export function fetchData() { return '${n}'; }\n`]),
);
const DIRECTIVES = Object.keys(FILES).map((f) => `rename fetchData to loadData in ${f}`);
const engineOptions = (ws: string, runDir: string, maxUsd?: number) => ({
  baseURL: emulator.current.url,
  apiKey: 'test',
  workspace: ws,
  runDir,
  maxTokens: 512,
  warm: 'prewarm' as const,
  pool: { maxThreads: 2 },
  ...(maxUsd === undefined ? {} : { maxUsd }),
});

describe('maxUsd: a client-side spend cap', () => {
  it('stops admitting turns before the ledger could pass the cap; resume under a higher cap finishes the run', async () => {
    const tag = `cap-${Date.now()}`;
    // what the run costs uncapped, on its own workspace
    const free = await ForkEngine.create(engineOptions(workspace(FILES), workspace({})));
    const whole = await free
      .fanOut(bigSnapshot(tag), DIRECTIVES)
      .settled()
      .finally(() => free.close());
    expect(whole.forks.every((f) => f.status === 'completed')).toBe(true);
    const cost = whole.summary.cost_usd.actual!;

    emulator.current.clearCache();
    const ws = workspace(FILES);
    const runs = workspace({});
    const cap = cost / 2;
    const capped = await ForkEngine.create(engineOptions(ws, runs, cap));
    const fan = capped.fanOut(bigSnapshot(tag), DIRECTIVES);
    const first = await fan.settled().finally(() => capped.close());
    const stopped = first.forks.filter((f) => f.error?.code === 'SPEND_CAP_MAX_USD');
    expect(stopped.length).toBeGreaterThan(0);
    expect(stopped[0]!.error!.message).toMatch(/the run's spend cap of \$[\d.]+ was reached: \$[\d.]+ spent/);
    expect(first.summary.cost_usd.actual!).toBeLessThanOrEqual(cap); // the ledger, warm-up included
    expect(first.summary.warmups).toBe(1);
    expect(first.summary.spend_cap).toMatchObject({ max_usd: cap, stopped: true, stopped_forks: stopped.length });
    // the cap's own count is never below the ledger's
    expect(first.summary.spend_cap!.spent_usd).toBeGreaterThanOrEqual(first.summary.cost_usd.actual!);

    const more = await ForkEngine.create(engineOptions(ws, runs, cost * 3));
    try {
      const resumed = more.resume(join(runs, fan.id));
      const { forks, summary } = await resumed.settled();
      expect(forks.map((f) => f.status)).toEqual(DIRECTIVES.map(() => 'completed'));
      // the cap counted what the first session spent: its tally is the whole run's ledger
      expect(summary.spend_cap).toMatchObject({ stopped: false, spent_usd: summary.cost_usd.actual });
      expect(more.spendCap).toMatchObject({ maxUsd: cost * 3, reservedUsd: 0 });
    } finally {
      await more.close();
    }
  });

  it('is refused with the distributed backend, and for a model it cannot price, before anything is sent', async () => {
    expect(() => resolveEngineOptions({ maxUsd: 1, distributed: { redis: 'redis://127.0.0.1:1' } })).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTION', message: expect.stringMatching(/^maxUsd: /) }),
    );
    expect(() => resolveEngineOptions({ maxUsd: -1 })).toThrow(/maxUsd/);
    const runDir = workspace({});
    const engine = await ForkEngine.create(engineOptions(workspace(FILES), runDir, 1));
    try {
      const unknown = { ...bigSnapshot('unknown'), model: 'claude-opus-9' };
      expect(() => engine.fanOut(unknown, DIRECTIVES)).toThrow(/^maxUsd: "claude-opus-9" cannot be priced/);
      expect(readdirSync(runDir)).toEqual([]); // nothing written either
    } finally {
      await engine.close();
    }
  });
});

describe('maxUsd against a fork steered to read what tokenizes densely (the attacker writes the file)', () => {
  it('a file of random characters cannot push the run past its cap', async () => {
    // 60,000 random printable characters: about 0.8 tokens a byte, where code and prose are 0.3
    let seed = 7;
    let noise = '';
    for (let i = 0; i < 60_000; i++) {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      noise += String.fromCharCode(33 + ((seed >> 8) % 94));
    }
    const files = { 'noise.txt': noise };
    const tag = `dense-${Date.now()}`;
    const free = await ForkEngine.create(engineOptions(workspace(files), workspace({})));
    const whole = await free
      .fanOut(bigSnapshot(tag), ['read noise.txt and report'])
      .settled()
      .finally(() => free.close());
    const cost = whole.summary.cost_usd.actual!;
    // the turn after the read is what costs: its request writes the whole file to the cache
    expect(whole.forks[0]!.requests.map((r) => r.usage.cache_creation_input_tokens)[1]).toBeGreaterThan(40_000);

    emulator.current.clearCache();
    const cap = cost * 0.85; // above what the turns before the dense one cost, below the whole run
    const capped = await ForkEngine.create(engineOptions(workspace(files), workspace({}), cap));
    const run = await capped
      .fanOut(bigSnapshot(tag), ['read noise.txt and report'])
      .settled()
      .finally(() => capped.close());
    expect(run.summary.cost_usd.actual!).toBeLessThanOrEqual(cap);
    expect(run.forks[0]!.error?.code).toBe('SPEND_CAP_MAX_USD');
  });
});
