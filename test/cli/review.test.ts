import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, repoWith } from '../core/tools/git-fixture.ts';
import { writePlan } from './review-fixture.ts';
import { forkcache, lastJson } from './run-cli.ts';

const files = {
  'src/a.ts': 'export const fetchData = 1;\n',
  'src/b.ts': 'import { fetchData } from "./a";\nexport const b = fetchData;\n',
  'src/c.ts': 'export const parseThing = 3;\n',
};
const directives = [
  'rename fetchData to loadData in src/a.ts',
  'rename fetchData to loadData in src/b.ts',
  'rename parseThing to parseItem in src/c.ts',
  'rename nothingHere to somethingElse in src/c.ts',
];

/** The one run directory under a plan's runs directory. */
const fanOutDir = (plan: string): string => {
  const runs = join(dirname(plan), 'runs');
  return join(runs, readdirSync(runs)[0]!);
};

describe('status, diff, merge and clean of a worktree run', () => {
  it('reviews each fork, merges the same tree as a shared-workspace run, and cleans up only its own', async () => {
    const repo = repoWith(files);
    const base = git(repo, 'rev-parse', 'HEAD');
    const plan = writePlan(repo, directives, { isolation: 'worktree' });
    const ran = await forkcache(['run', plan, '--json']);
    expect(ran.stderr).not.toMatch(/Error:/);
    const first = lastJson(ran.stdout)['fork_results'][0];
    expect(first.branch).toMatch(/^forkcache\/fo\d+-\w+-f01$/);
    expect(first.diff_stat).toMatch(/src\/a\.ts \| 2 \+-/);
    const dir = fanOutDir(plan);

    const status = await forkcache(['status', dir, '--json']);
    expect(status.code).toBe(0);
    const review = lastJson(status.stdout);
    expect(review['base']).toBe(base);
    expect(review['forks'].map((f: any) => [f.directive, f.files_changed])).toEqual([
      [directives[0], ['src/a.ts']],
      [directives[1], ['src/b.ts']],
      [directives[2], ['src/c.ts']],
      [directives[3], []],
    ]);
    const [one, , , four] = review['forks'];
    expect(one.branch).toBe(`forkcache/${one.fork_id}`);
    expect(one.commit).toBe(git(repo, 'rev-parse', one.branch));
    expect(one.commit).toBe(first.commit);
    expect(one.turns).toBeGreaterThan(1);
    expect(one.cost_usd).toBeGreaterThan(0);
    expect(four.commit).toBeNull();
    const table = await forkcache(['status', dir]);
    expect(table.stdout).toMatch(
      /f01\s+completed\s+\d+\s+\$\d\.\d{4}\s+1\s+forkcache\/\S+-f01 [0-9a-f]{10}\s+rename fetchData/,
    );

    const diff = await forkcache(['diff', dir, 'f01']);
    expect(diff.code).toBe(0);
    expect(diff.stdout).toContain(`# ${one.fork_id} (completed) forkcache/${one.fork_id} ${base.slice(0, 10)}..`);
    expect(diff.stdout).toContain('-export const fetchData = 1;\n+export const loadData = 1;');
    expect(diff.stdout).not.toContain('src/b.ts');

    // the same plan in a shared workspace, for the tree merge must give
    const shared = repoWith(files);
    const sharedPlan = writePlan(shared, directives);
    expect((await forkcache(['run', sharedPlan, '--json'])).stderr).not.toMatch(/Error:/);
    git(shared, 'add', '-A');
    const sharedTree = git(shared, 'write-tree');
    const sharedDiff = await forkcache(['diff', fanOutDir(sharedPlan)]);
    expect(sharedDiff.stdout).toContain('#   files written: src/a.ts');
    expect(sharedDiff.stdout).toContain('+export const loadData = 1;');
    // once the user commits the forks' work, the diff against HEAD is empty, and says why
    git(shared, 'commit', '--quiet', '-m', 'the forks');
    const moved = await forkcache(['diff', fanOutDir(sharedPlan)]);
    expect(moved.stdout).toMatch(
      /# empty: these files are as HEAD has them, and commit [0-9a-f]{10} \(\S+, after the run\) changed them/,
    );
    const notWorktrees = await forkcache(['merge', fanOutDir(sharedPlan)]);
    expect(notWorktrees.code).toBe(2);
    expect(notWorktrees.stderr).toMatch(/ran in a shared workspace: its changes are in the workspace already/);
    const noSuchFork = await forkcache(['diff', dir, 'f09']);
    expect(noSuchFork.code).toBe(2);
    expect(noSuchFork.stderr).toMatch(/fork f09: not a fork of fo\d+-\w+ \(its forks: f01…f04\)/);

    const dry = await forkcache(['merge', dir, '--dry-run']);
    expect(dry.stdout).toMatch(/dry run: 3 fork\(s\) merge cleanly into main; nothing changed/);
    expect(git(repo, 'rev-parse', 'HEAD')).toBe(base);
    const merged = await forkcache(['merge', dir]);
    expect(merged.code).toBe(0);
    expect(merged.stdout).toMatch(/skipped +f04 +no change/);
    expect(merged.stdout).toMatch(/main: [0-9a-f]{10} → [0-9a-f]{10} \(3 fork\(s\) in one commit\)/);
    expect(git(repo, 'rev-parse', 'HEAD^{tree}')).toBe(sharedTree);
    expect(git(repo, 'log', '-1', '--format=%P').split(' ')).toHaveLength(4);
    expect(readFileSync(join(repo, 'src/b.ts'), 'utf8')).toBe(readFileSync(join(shared, 'src/b.ts'), 'utf8'));
    expect(git(repo, 'status', '--porcelain', '--untracked-files=no')).toBe('');
    expect((await forkcache(['merge', dir])).stdout).toMatch(/skipped +f01 +merged already[\s\S]*nothing to merge/);

    // a branch of the same prefix the run did not make stays, whatever clean is asked
    git(repo, 'branch', 'forkcache/mine');
    git(repo, 'branch', `forkcache/${one.fork_id.replace(/-f01$/, '-f99')}`);
    const listed = await forkcache(['clean', dir, '--dry-run']);
    // each fork's worktree went once its commit was made: only the branches are left
    expect(listed.stdout).not.toMatch(/^would remove worktree /m);
    expect(listed.stdout.match(/^would remove branch /gm)).toHaveLength(4);
    expect(git(repo, 'worktree', 'list', '--porcelain').match(/^worktree /gm)).toHaveLength(1);
    const cleaned = await forkcache(['clean', dir]);
    expect(cleaned.code).toBe(0);
    expect(cleaned.stdout).toMatch(/^removed branch forkcache\/\S+-f01 \([0-9a-f]{10}, merged\)$/m);
    expect(git(repo, 'worktree', 'list', '--porcelain').match(/^worktree /gm)).toHaveLength(1);
    expect(git(repo, 'branch', '--list', 'forkcache/*', '--format=%(refname:short)').split('\n').sort()).toEqual(
      [`forkcache/${one.fork_id.replace(/-f01$/, '-f99')}`, 'forkcache/mine'].sort(),
    );
    expect((await forkcache(['clean', dir])).stdout).toMatch(/nothing to remove/);
  });

  it('merge lists the conflicts with nothing applied, refuses a dirty tree, and --skip leaves a fork out', async () => {
    const repo = repoWith(files);
    const plan = writePlan(
      repo,
      ['rename fetchData to loadData in src/a.ts', 'rename fetchData to getData in src/a.ts'],
      {
        isolation: 'worktree',
      },
    );
    await forkcache(['run', plan, '--json']);
    const dir = fanOutDir(plan);
    const before = {
      head: git(repo, 'rev-parse', 'HEAD'),
      index: git(repo, 'ls-files', '-s'),
      file: readFileSync(join(repo, 'src/a.ts'), 'utf8'),
    };
    const conflict = await forkcache(['merge', dir]);
    expect(conflict.code).toBe(5); // nothing merged
    expect(conflict.stdout).toMatch(/^conflict f02 +forkcache\/\S+-f02 +in src\/a\.ts$/m);
    expect(conflict.stdout).toMatch(/nothing was merged: 1 fork\(s\) conflict with main/);
    expect({
      head: git(repo, 'rev-parse', 'HEAD'),
      index: git(repo, 'ls-files', '-s'),
      file: readFileSync(join(repo, 'src/a.ts'), 'utf8'),
    }).toEqual(before);
    expect(git(repo, 'status', '--porcelain', '--untracked-files=no')).toBe('');
    expect(() => git(repo, 'rev-parse', '--verify', '--quiet', 'MERGE_HEAD')).toThrow();

    writeFileSync(join(repo, 'src/c.ts'), 'dirty\n');
    const dirty = await forkcache(['merge', dir, '--skip', 'f02']);
    expect(dirty.code).toBe(2);
    expect(dirty.stderr).toMatch(/uncommitted changes \(src\/c\.ts\): commit or stash them first/);
    git(repo, 'checkout', '--', 'src/c.ts');
    const skipped = await forkcache(['merge', dir, '--skip', 'f02']);
    expect(skipped.code).toBe(4); // f02's work is not in main: some merged, one left out
    expect(skipped.stdout).toMatch(/skipped +f02 +skipped \(--skip\)/);
    expect(readFileSync(join(repo, 'src/a.ts'), 'utf8')).toBe('export const loadData = 1;\n');

    // f02's work is in no branch but its own: clean keeps it unless told --force (no terminal here)
    const kept = await forkcache(['clean', dir]);
    expect(kept.code).toBe(1);
    expect(kept.stdout).toMatch(
      /^kept forkcache\/\S+-f02: not merged into HEAD \([0-9a-f]{10}\): --force removes it$/m,
    );
    expect(kept.stdout).toMatch(/^removed branch forkcache\/\S+-f01 \([0-9a-f]{10}, merged\)$/m);
    expect(git(repo, 'branch', '--list', 'forkcache/*', '--format=%(refname:short)')).toMatch(/-f02$/);
    const forced = await forkcache(['clean', dir, '--force']);
    expect(forced.code).toBe(0);
    expect(forced.stdout).toMatch(/^removed branch forkcache\/\S+-f02 \([0-9a-f]{10}, NOT merged/m);
    expect(git(repo, 'branch', '--list', 'forkcache/*')).toBe('');
  });
});
