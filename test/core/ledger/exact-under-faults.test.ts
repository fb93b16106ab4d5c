import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { attemptCounts } from '../../../src/cli/output/summary-table.ts';
import type { FaultKind } from '../../../src/integrations/emulator/faults.ts';
import { startEmulator } from '../../../src/integrations/emulator/start.ts';
import { ForkEngine } from '../../../src/core/engine/engine.ts';
import { bigSnapshot, workspace } from '../engine/helpers.ts';

// Issue 15, case 6: the usage of stream attempts that failed and were retried was dropped
// (21-43% fewer cache reads than the endpoint served under faults). Every attempt the endpoint
// billed is now in the ledger: its totals equal the emulator's own count, token for token.

const MIX: FaultKind[] = ['stream-error', '429', 'stream-error', '500', 'reset', 'stream-error', '529'];

describe('the ledger under faults (issue 15, case 6)', () => {
  it("equals the emulator's stats() totals exactly: uncached input, cache reads, cache writes, output", async () => {
    const seen = new Map<string, number>();
    let next = 0;
    const emulator = await startEmulator({
      latency: 'off',
      script: 'refactor',
      retryAfterSeconds: 0.001,
      // the first two attempts of every request body fail, through the mix (a stream-error
      // attempt is billed, then retried by the engine; the others are never billed)
      faultFor: (body) => {
        const key = createHash('sha256').update(JSON.stringify(body)).digest('hex');
        const n = seen.get(key) ?? 0;
        seen.set(key, n + 1);
        return n < 2 ? MIX[next++ % MIX.length] : 'none';
      },
    });
    const files = Object.fromEntries(
      Array.from({ length: 6 }, (_, i) => [`m${i}.ts`, `export const fetchData = ${i};\n`]),
    );
    const engine = await ForkEngine.create({
      baseURL: emulator.url,
      apiKey: 'test',
      workspace: workspace(files),
      runDir: workspace({}),
      turnRetry: { baseMs: 0, retries: 6 },
      // the emulator's 1 ms retry-after, honoured (the default 1 s floor would only make this test slow)
      retryAfter: { floorMs: 1 },
      pool: { maxThreads: 2 },
    });
    try {
      const fan = engine.fanOut(
        bigSnapshot(`exact-${Date.now()}`),
        Object.keys(files).map((f) => `rename fetchData to loadData in ${f}`),
      );
      const result = await fan.settled();
      const { forks, summary } = result;
      expect(forks.map((f) => f.status)).toEqual(forks.map(() => 'completed'));
      const failed = forks.reduce((n, f) => n + (f.failedAttempts?.length ?? 0), 0);
      expect(failed).toBeGreaterThan(0); // billed attempts that failed did happen
      const stats = emulator.stats();
      expect(stats.requests.faults['stream-error']).toBe(failed);
      expect({
        input: summary.usage.input_tokens,
        read: summary.usage.cache_read_input_tokens,
        write: summary.usage.cache_creation_input_tokens,
        output: summary.usage.output_tokens,
      }).toEqual({
        input: stats.tokens.uncached,
        read: stats.tokens.cacheRead,
        write: stats.tokens.cacheWrite,
        output: stats.tokens.output,
      });
      expect(summary.requests).toBe(stats.requests.messages);
      // the run's summary states turns and attempts apart
      const turns = forks.reduce((n, f) => n + f.requests.length, 0);
      expect(attemptCounts(result)).toEqual({
        turns,
        failed_attempts: failed,
        unknown_outcome: 0,
        cut_off_attempts: 0,
      });
      expect(turns + failed).toBe(stats.requests.messages);
    } finally {
      await engine.close();
      await emulator.close();
    }
  });
});
