import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startEmulator } from '../../src/integrations/emulator/start.ts';
import { forkcache, lastJson } from './run-cli.ts';

describe('forkcache run at the API spend cap', () => {
  it('stops without retrying, says why, exits 3; resume finishes once the cap is lifted', async () => {
    // the "real API" here is an emulator whose spend cap is reached by the first request
    const emulator = await startEmulator({ latency: 'off', rateLimits: { preset: 'start', spendLimitUsd: 0.0001 } });
    try {
      const plan = JSON.parse(readFileSync('examples/plan/plan.json', 'utf8')) as Record<string, unknown>;
      const dir = mkdtempSync(join(tmpdir(), 'fc-spend-'));
      const path = join(dir, 'plan.json');
      writeFileSync(
        path,
        JSON.stringify({
          ...plan,
          parent: join(process.cwd(), 'examples/plan/parent.json'),
          workspace: join(process.cwd(), 'examples/sample-repo'),
          runsDir: join(dir, 'runs'),
        }),
      );
      const env = { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: emulator.url };
      const run = await forkcache(['run', path, '--json', '--api', 'anthropic'], env);
      expect(run.code).toBe(3);
      expect(run.stderr).toMatch(
        /stopped: the API's spend limit was reached \(enforced_spend_limit_reached\); \d fork\(s\) stopped .*continue with: forkcache resume /,
      );
      const summary = lastJson(run.stdout);
      expect(summary.rate_limits).toMatchObject({ admission: 'on', stopped: 'enforced_spend_limit_reached' });
      expect(summary.forks.completed).toBeGreaterThanOrEqual(1); // the first request ran before the cap was known
      const stopped = (summary.fork_results as { status: string; error: { code: string } | null }[]).filter(
        (f) => f.status !== 'completed',
      );
      expect(stopped.length).toBeGreaterThan(0);
      for (const f of stopped) expect(f.error?.code).toBe('RATE_LIMIT_SPEND_CAP');
      // no retries: one 429 at most per stopped fork
      expect(emulator.stats().requests.byStatus['429']).toBeLessThanOrEqual(stopped.length);

      emulator.rateLimits.setSpendLimit(undefined);
      const resumed = await forkcache(['resume', summary.run_dir as string, '--json', '--api', 'anthropic'], env);
      expect(resumed.code).toBe(0);
      expect(lastJson(resumed.stdout).forks).toMatchObject({ total: 3, completed: 3 });
    } finally {
      await emulator.close();
    }
  });
});
