import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, repoWith } from '../core/tools/git-fixture.ts';
import { writePlan } from './review-fixture.ts';
import { cliArgs, runNode } from './run-cli.ts';

// Issue 42: the retry plan's run landed inside the old run directory
// (`runs/fo001-…/.forkcache/runs/fo002-…`: a relative runsDir is read from the plan file's
// folder), a run ending 0 printed no run directory, and `merge .forkcache/runs` did not see it.

const files = {
  'src/x.ts': 'export const alpha = 1, beta = 2;\n',
  'src/u1.ts': "import { alpha, beta } from './x';\nexport const u1 = alpha + beta;\n",
};
const targets = Object.keys(files);
const directives = [
  ...targets.map((file) => ({ directive: `rename alpha to alphaOne in ${file}`, file })),
  ...targets.map((file) => ({ directive: `rename beta to betaTwo in ${file}`, file })),
];

describe('runs are never lost (issue 42)', () => {
  it("the retry plan's run lands in the same runs directory, every run names its directory, and `merge .forkcache/runs` finds both", async () => {
    const repo = repoWith(files);
    // the plan in the repository, with the default runs directory (.forkcache/runs beside it), used by relative paths
    const made = writePlan(repo, directives as never, { isolation: 'worktree' });
    const plan = JSON.parse(readFileSync(made, 'utf8')) as Record<string, unknown>;
    delete plan['runsDir'];
    plan['workspace'] = '.';
    writeFileSync(join(repo, 'plan.json'), JSON.stringify(plan));
    const cli = (...args: string[]) => runNode(cliArgs(...args), { cwd: repo });
    const runs = join(repo, '.forkcache', 'runs');

    const first = await cli('run', 'plan.json');
    expect(first.code, first.stderr).toBe(0);
    const [id1] = readdirSync(runs);
    // named at the start, and last when the run ends 0
    expect(first.stderr).toContain(`forkcache run: run directory ${join(runs, id1!)}`);
    expect(first.stderr.trimEnd().split('\n').at(-1)).toBe(
      `run directory: ${join(runs, id1!)} (forkcache status|diff|merge ${join(runs, id1!)})`,
    );

    const merged = await cli('merge', join('.forkcache', 'runs', id1!), '--clean-only');
    expect(merged.stdout).toMatch(/\(2 fork\(s\) in one commit\)/);
    const retryPlan = join('.forkcache', 'runs', id1!, 'retry-plan.json');
    expect(JSON.parse(readFileSync(join(repo, retryPlan), 'utf8')).runsDir).toBe(runs);

    const retried = await cli('run', retryPlan);
    expect(retried.code, retried.stderr).toBe(0);
    // beside its parent, not inside it
    expect(existsSync(join(runs, id1!, '.forkcache'))).toBe(false);
    const ids = readdirSync(runs).sort();
    expect(ids).toHaveLength(2);

    // the runs directory: the first run's merged forks are merged already, its conflicting ones
    // are the retry run's, which merges
    const all = await cli('merge', join('.forkcache', 'runs'));
    expect(all.code, all.stdout + all.stderr).toBe(0);
    expect(all.stdout).toMatch(/skipped {2}f03 {2}redone by the run of its retry plan/);
    expect(all.stdout).toMatch(/\(2 fork\(s\) in one commit\)/);
    expect(git(repo, 'show', 'HEAD:src/u1.ts')).toBe(
      "import { alphaOne, betaTwo } from './x';\nexport const u1 = alphaOne + betaTwo;",
    );
  });

  it('a run nested inside another by an older retry plan is still found in the runs directory', async () => {
    const repo = repoWith(files);
    const planA = writePlan(repo, directives.slice(0, 1) as never, { isolation: 'worktree' });
    const planB = writePlan(repo, directives.slice(1, 2) as never, { isolation: 'worktree' });
    const runsA = join(dirname(planA), 'runs');
    const runsB = join(dirname(planB), 'runs');
    expect((await runNode(cliArgs('run', planA), { cwd: repo })).code).toBe(0);
    expect((await runNode(cliArgs('run', planB), { cwd: repo })).code).toBe(0);
    // where forkcache 0.4.0 put a retry plan's run: inside its parent's run directory
    const [idA] = readdirSync(runsA);
    const [idB] = readdirSync(runsB);
    mkdirSync(join(runsA, idA!, '.forkcache', 'runs'), { recursive: true });
    renameSync(join(runsB, idB!), join(runsA, idA!, '.forkcache', 'runs', idB!));
    const status = await runNode(cliArgs('status', runsA), { cwd: repo });
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain(idA!);
    expect(status.stdout).toContain(idB!);
  });
});
