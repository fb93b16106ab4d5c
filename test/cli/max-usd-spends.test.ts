import { describe, expect, it } from 'vitest';
import { renamePlan } from './board/plan-500.ts';
import { forkcache, lastJson } from './run-cli.ts';

// A spend cap that spends its cap: at 30% of what the plan costs, the run spends at least 90%
// of the cap before it stops (each turn is admitted on an estimate from the fork's own turns,
// not the model's worst case), the forks it stopped end `capped`, not `failed`, stderr prints
// one continue command with the cap it needs, and that command finishes the run.

const FORKS = 24;

describe('--max-usd at 30% of the plan', () => {
  it('spends at least 90% of the cap, ends the stopped forks capped, and prints one continue command with a higher cap', async () => {
    const whole = renamePlan(FORKS);
    const full = await forkcache(['run', whole.plan, '--api', 'emulator', '--json']);
    expect(full.code, full.stderr.slice(-2000)).toBe(0);
    const cost = lastJson(full.stdout).cost_usd.actual as number;

    const cap = Number((0.3 * cost).toFixed(4));
    const { plan } = renamePlan(FORKS);
    const run = await forkcache(['run', plan, '--api', 'emulator', '--json', '--max-usd', String(cap)]);
    expect(run.code, run.stderr.slice(-2000)).toBe(3);
    const summary = lastJson(run.stdout);
    expect(summary.spend_cap).toMatchObject({ max_usd: cap, stopped: true });
    expect(summary.cost_usd.actual).toBeGreaterThanOrEqual(0.9 * cap);
    const statuses = (summary.fork_results as { status: string }[]).map((f) => f.status);
    expect(statuses).not.toContain('failed');
    expect(statuses.filter((s) => s === 'capped').length).toBe(summary.spend_cap.stopped_forks);
    expect(summary.forks.capped).toBeGreaterThan(0);

    // one command goes on, and it names a cap; nothing else says to continue or resume
    const commands = run.stderr.split('\n').filter((l) => /forkcache resume /.test(l));
    expect(commands).toHaveLength(1);
    const m = / continue with: forkcache resume (\S+) --max-usd (\d+\.\d\d) /.exec(commands[0]!);
    expect(m, run.stderr.slice(-2000)).not.toBeNull();
    expect(Number(m![2])).toBeGreaterThan(cap);
    expect(run.stderr).not.toContain('continue the failed ones');
  });
});
