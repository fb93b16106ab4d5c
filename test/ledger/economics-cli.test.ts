import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Run the real command as a child process, as a user would. */
function forkcache(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const run = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], { cwd: ROOT, encoding: 'utf8', timeout: 30_000 });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

const SEED_ARGS = ['economics', '--prefix', '48500', '--directive', '200', '--children', '5', '--model', 'claude-sonnet-4-6'];

describe('forkcache economics (child process)', () => {
  it('--json reproduces the seed figures under both conventions', () => {
    const run = forkcache(...SEED_ARGS, '--convention', 'both', '--json');
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const out = JSON.parse(run.stdout) as Record<'seed' | 'real', { perChild: { children: string; tokenEquivalents: number }[]; fork: { tokenEquivalents: number }; breakEven: unknown }>;
    expect(out.seed.perChild.map((c) => [c.children, c.tokenEquivalents])).toEqual([['1', 48_700], ['2-5', 5_050]]);
    expect(out.seed.fork.tokenEquivalents).toBe(68_900);
    expect(out.real.perChild.map((c) => [c.children, c.tokenEquivalents])).toEqual([['1', 60_825], ['2-5', 5_050]]);
    expect(out.real.breakEven).toEqual({ vsNoCache: 2, vsFreshAgents: 6 });
  });

  it('prints a readable table with per-child costs, totals, savings and break-even N', () => {
    const run = forkcache(...SEED_ARGS, '--convention', 'seed');
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^\s+1\s+0\s+48,500\s+200\s+48,700\s+\$0\.146100$/m);
    expect(run.stdout).toMatch(/^\s+2-5\s+48,500\s+0\s+200\s+5,050\s+\$0\.015150$/m);
    expect(run.stdout).toMatch(/no cache\s+243,500\s+\$0\.730500\s+fork saves 71\.70%/);
    expect(run.stdout).toContain('break-even N: vs no cache 2, vs fresh agents 4');
  });

  it('exits 2 with a message naming the flag on bad input', () => {
    const negative = forkcache(...SEED_ARGS, '--prefix', '-5');
    expect(negative.status).toBe(2);
    expect(negative.stderr).toContain('--prefix: expected a non-negative integer (got "-5")');
    expect(negative.stdout).toBe('');
    const model = forkcache(...SEED_ARGS, '--model', 'claude-nope');
    expect(model.status).toBe(2);
    expect(model.stderr).toContain('--model: "claude-nope" is not in the model catalogue');
  });
});
