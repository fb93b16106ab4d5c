import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { startEmulator } from '../../../src/integrations/emulator/start.ts';
import { ForkEngine } from '../../../src/core/engine/engine.ts';
import { bigSnapshot, workspace } from './helpers.ts';

/*
 * The retry budget end to end (real worker threads, the real SDK, the emulator's fault
 * injection): an API that answers every request of a fork with a 429 and `retry-after: 0`.
 * The engine's policy is set small so that the budget runs out in a fraction of a second; the
 * fork ends `failed` with FORK_RETRY_BUDGET, its transcript says so, and its sibling on the
 * same engine (whose requests are answered) completes.
 */
// real worker threads: the bound is a backstop for a loaded machine, the test waits on the run itself
describe('the retry budget of a turn', () => {
  it('a fork the API keeps refusing ends failed with FORK_RETRY_BUDGET; the bound holds the request count', async () => {
    const emulator = await startEmulator({
      latency: 'off',
      retryAfterSeconds: '0',
      faultFor: (body) => (JSON.stringify(body).includes('refused directive') ? '429' : 'none'),
    });
    const engine = await ForkEngine.create({
      baseURL: emulator.url,
      apiKey: 'test',
      workspace: workspace(),
      runDir: workspace({}),
      pool: { maxThreads: 1 },
      retryAfter: { floorMs: 25, ceilingMs: 50, jitter: 0 },
      turnRetry: { budgetMs: 400 },
    });
    try {
      const fan = engine.fanOut(bigSnapshot(`budget-${Date.now()}`), ['refused directive', 'say hi']);
      const { forks } = await fan.settled();
      const [refused, fine] = forks;
      expect(fine!.status).toBe('completed');
      expect(refused!.status).toBe('failed');
      expect(refused!.error).toMatchObject({
        code: 'FORK_RETRY_BUDGET',
        message: expect.stringMatching(
          /^turn 1: still failing after \d+ attempt\(s\) over \d+\.\d s, past the retry budget of 0\.4 s/,
        ),
      });
      // one attempt per 25 ms floor at most, over a 400 ms budget (+ the one that found it spent)
      const refusals = emulator.stats().requests.byStatus['429'] ?? 0;
      expect(refusals).toBeGreaterThan(1);
      expect(refusals).toBeLessThanOrEqual(400 / 25 + 2);
      expect(readFileSync(refused!.transcriptPath!, 'utf8')).toMatch(
        /"type":"end","status":"failed".*FORK_RETRY_BUDGET/,
      );
    } finally {
      await engine.close();
      await emulator.close();
    }
  });
});
