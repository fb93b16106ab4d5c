import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ForkEngine } from '../../../src/core/engine/engine.ts';
import { bigSnapshot, sharedEmulator, workspace } from './helpers.ts';

// `cache_efficiency` is the fan-out requests' reads of the shared prefix over the most they
// could read (docs/architecture.md). Here every counted request reads the whole prefix: its
// writer is an attempt the ledger bills but does not count as a fan-out request (a first
// request whose stream failed after it began, retried), then a cancel and a resume, then a
// fan-out of a prefix an earlier one left cached. All of them once came out above 1
// (n ÷ (n − 1): the prefix counted as written by one of the requests that read it).

/** The first messages request of the file fails mid-stream: it wrote the prefix and was billed. */
let requests = 0;
const emulator = sharedEmulator({
  script: 'refactor',
  faultFor: () => (++requests === 1 ? 'stream-error' : undefined),
});
const FILES = Object.fromEntries(
  Array.from({ length: 6 }, (_, i) => [`f${i}.ts`, `export const fetchData${i} = ${i};\n`]),
);
const DIRECTIVES = Object.keys(FILES).map((f) => `rename fetchData to loadData in ${f}`);

describe('cache efficiency of resumed and pre-warmed fan-outs', () => {
  it('is 1 when every counted request read the whole prefix: after a billed retry, cancel + resume, and a pre-warmed prefix', async () => {
    const ws = workspace(FILES);
    const runs = workspace({});
    const snapshot = bigSnapshot(`efficiency-${Date.now()}`);
    const options = { baseURL: emulator.current.url, apiKey: 'test', workspace: ws, pool: { maxThreads: 1 } };
    const first = await ForkEngine.create({ ...options, runDir: runs, concurrency: 2 });
    const fan = first.fanOut(snapshot, DIRECTIVES);
    let turns = 0;
    for await (const e of fan) if (e.type === 'turn-end' && ++turns === 3) fan.cancel();
    const cancelled = await fan.settled();
    await first.close();
    expect(cancelled.forks.some((f) => f.status === 'cancelled')).toBe(true);
    expect(cancelled.summary.cache.cache_efficiency).toBeLessThanOrEqual(1);

    const second = await ForkEngine.create(options);
    try {
      const resumed = await second.resume(join(runs, fan.id)).settled();
      expect(resumed.forks.map((f) => f.status)).toEqual(DIRECTIVES.map(() => 'completed'));
      const [group] = resumed.summary.cache.by_fanout;
      // every fan-out request read the whole shared prefix: none of them wrote it
      expect(group!.cache_read_input_tokens).toBeGreaterThanOrEqual(group!.requests * group!.shared_prefix_tokens);
      expect(group!.uncached_at_start).toBe(0);
      expect(resumed.summary.cache.cache_efficiency).toBe(1);

      // a new fan-out of the same prefix, which the runs above left cached: pre-warmed
      const again = await second.fanOut(snapshot, DIRECTIVES.slice(0, 3)).settled();
      expect(again.summary.cache.cache_efficiency).toBe(1);
      expect(again.summary.cache.max_fanout_reads).toBe(3 * again.summary.cache.by_fanout[0]!.shared_prefix_tokens);
    } finally {
      await second.close();
    }
  });
});
