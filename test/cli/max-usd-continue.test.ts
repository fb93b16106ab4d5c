import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { renamePlan } from './board/plan-500.ts';
import { forkcache, lastJson } from './run-cli.ts';

// The printed continue command finishes a capped run. What the cap admits, and so where it
// stops and what it prints, is made independent of timing: the emulator's refactor model
// answers every fork the same turns with the same token counts, and one request is in flight
// at a time (`limits.concurrency: 1`), so the forks take their turns in rounds and the cap
// meets them before any is done, in every run. That is the case the suggested cap must cover
// at its hardest: the next session sends each stopped fork's next turn on a cache that may
// have expired, held at its worst case (the prefix and the fork's own history written again).

const FORKS = 24;

function serialPlan(): string {
  const { plan } = renamePlan(FORKS);
  const json = JSON.parse(readFileSync(plan, 'utf8')) as Record<string, unknown>;
  writeFileSync(plan, JSON.stringify({ ...json, limits: { concurrency: 1 } }));
  return plan;
}

describe('--max-usd at 30% of the estimate, then the printed continue command', () => {
  it('spends at least 90% of the cap, and the one printed command finishes every fork', async () => {
    const dry = await forkcache(['run', serialPlan(), '--api', 'emulator', '--dry-run', '--json']);
    expect(dry.code, dry.stderr).toBe(0);
    const estimate = (JSON.parse(dry.stdout) as { estimate: { cost: { usd: number } } }).estimate.cost.usd;
    const cap = Number((0.3 * estimate).toFixed(4));

    const run = await forkcache(['run', serialPlan(), '--api', 'emulator', '--json', '--max-usd', String(cap)]);
    expect(run.code, run.stderr.slice(-2000)).toBe(3);
    const first = lastJson(run.stdout);
    expect(first.spend_cap).toMatchObject({ max_usd: cap, stopped: true });
    expect(first.cost_usd.actual).toBeGreaterThanOrEqual(0.9 * cap);
    expect(first.forks.completed).toBeLessThan(FORKS);

    const commands = run.stderr.split('\n').filter((l) => /forkcache resume /.test(l));
    expect(commands).toHaveLength(1);
    const m = / continue with: forkcache resume (\S+) --max-usd (\d+\.\d\d) /.exec(commands[0]!);
    expect(m, run.stderr.slice(-2000)).not.toBeNull();

    const resumed = await forkcache(['resume', m![1]!, '--max-usd', m![2]!, '--api', 'emulator', '--json']);
    expect(resumed.code, resumed.stderr.slice(-2000)).toBe(0);
    expect(resumed.stderr).toContain(`forkcache resume: spend cap $${Number(m![2])} (--max-usd), counting every pass`);
    const after = lastJson(resumed.stdout);
    expect(after.forks).toMatchObject({ total: FORKS, completed: FORKS });
    expect(after.spend_cap).toMatchObject({ stopped: false });
  });
});
