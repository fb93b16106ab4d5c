import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, repoWith } from '../core/tools/git-fixture.ts';
import { writePlan } from './review-fixture.ts';
import { forkcache, lastJson } from './run-cli.ts';

// Issue 34: two renames meeting on the same import lines conflicted in 126 forks, and finding
// them took one `merge --dry-run --skip …` per conflict; "redo that fork" had no command. Now
// one pass lists every conflict, `--clean-only` merges the rest, and the conflicting forks are
// written as a plan that `forkcache run` redoes on the new HEAD.

const files = {
  'src/x.ts': 'export const alpha = 1, beta = 2;\n',
  'src/u1.ts': "import { alpha, beta } from './x';\nexport const u1 = alpha + beta;\n",
  'src/u2.ts': "import { alpha, beta } from './x';\nexport const u2 = alpha * beta;\n",
  'src/other.ts': 'export const gamma = 3;\n',
};
const targets = ['src/x.ts', 'src/u1.ts', 'src/u2.ts'];
const directives = [
  ...targets.map((file) => ({ directive: `rename alpha to alphaOne in ${file}`, file })),
  ...targets.map((file) => ({ directive: `rename beta to betaTwo in ${file}`, file })),
  { directive: 'rename gamma to delta in src/other.ts', file: 'src/other.ts' },
];

const fanOuts = (plan: string): string[] => {
  const runs = join(dirname(plan), 'runs');
  return readdirSync(runs)
    .filter((d) => existsSync(join(runs, d, 'manifest.json')))
    .sort()
    .map((d) => join(runs, d));
};

describe('merge finds every conflict in one pass (issue 34)', () => {
  it('merges the clean forks with --clean-only and the retry plan finishes the rest, ending in the shared-workspace tree', async () => {
    const shared = repoWith(files);
    const sharedRun = await forkcache(['run', writePlan(shared, directives as never), '--json']);
    expect(lastJson(sharedRun.stdout)['forks']['completed']).toBe(7);
    git(shared, 'add', '-A');
    const sharedTree = git(shared, 'write-tree');

    const repo = repoWith(files);
    const base = git(repo, 'rev-parse', 'HEAD');
    const plan = writePlan(repo, directives as never, {
      isolation: 'worktree',
      check: '! grep -qw "$(echo {directive} | cut -d" " -f2)" {file}',
    });
    const ran = await forkcache(['run', plan, '--json']);
    expect(ran.code).toBe(0);
    const [dir] = fanOuts(plan) as [string];

    // one dry run names all three conflicts (the beta renames meet the alpha ones on the same lines)
    const dry = await forkcache(['merge', dir, '--dry-run', '--json']);
    expect(dry.code).toBe(1);
    const seen = lastJson(dry.stdout);
    expect(seen['conflicts'].map((c: { fork_id: string }) => c.fork_id.slice(-3))).toEqual(['f04', 'f05', 'f06']);
    expect(seen['conflicts'].map((c: { files: string[] }) => c.files)).toEqual(targets.map((t) => [t]));
    expect(seen['merged']).toHaveLength(4);
    expect(git(repo, 'rev-parse', 'HEAD')).toBe(base);

    // without --clean-only nothing moves, and the message names the option
    const refused = await forkcache(['merge', dir]);
    expect(refused.code).toBe(5); // nothing merged (src/cli/exit-codes.ts)
    expect(refused.stdout).toMatch(/^conflict f04 .* in src\/x\.ts$/m);
    expect(refused.stdout).toContain(`nothing was merged: 3 fork(s) conflict with main`);
    expect(refused.stdout).toContain(`forkcache merge ${dir} --clean-only`);
    expect(git(repo, 'rev-parse', 'HEAD')).toBe(base);

    const merged = await forkcache(['merge', dir, '--clean-only']);
    expect(merged.code).toBe(4); // some merged: three forks' work is not in main yet
    expect(merged.stdout).toMatch(/main: [0-9a-f]{10} → [0-9a-f]{10} \(4 fork\(s\) in one commit\)/);
    const retryPlan = join(dir, 'retry-plan.json');
    expect(merged.stdout).toContain(`redo the 3 conflicting fork(s) on main with: forkcache run ${retryPlan}`);
    const written = JSON.parse(readFileSync(retryPlan, 'utf8'));
    expect(written.directives).toEqual(directives.slice(3, 6));
    expect(written.isolation).toBe('worktree');
    expect(written.check).toContain('{file}');
    expect(readFileSync(join(repo, 'src/u1.ts'), 'utf8')).toContain('alphaOne, beta }');

    // the printed command redoes them on the new HEAD; their merge is then clean
    const retried = await forkcache(['run', retryPlan, '--json']);
    expect(retried.code).toBe(0);
    expect(lastJson(retried.stdout)['forks']['completed']).toBe(3);
    const second = fanOuts(plan).find((d) => d !== dir)!;
    expect(JSON.parse(readFileSync(join(second, 'manifest.json'), 'utf8')).worktrees.base).toBe(
      git(repo, 'rev-parse', 'HEAD'),
    );
    const finished = await forkcache(['merge', second]);
    expect(finished.code).toBe(0);
    expect(finished.stdout).toMatch(/\(3 fork\(s\) in one commit\)/);
    expect(git(repo, 'rev-parse', 'HEAD^{tree}')).toBe(sharedTree);
    expect(readFileSync(join(repo, 'src/u1.ts'), 'utf8')).toBe(
      "import { alphaOne, betaTwo } from './x';\nexport const u1 = alphaOne + betaTwo;\n",
    );
  });
});
