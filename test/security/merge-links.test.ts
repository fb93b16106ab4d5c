import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, repoWith } from '../core/tools/git-fixture.ts';
import { writePlan } from '../cli/review-fixture.ts';
import { forkcache } from '../cli/run-cli.ts';

// Issue 33 (low): `merge` brought fork-made symlinks pointing outside the repository, and
// gitlinks, into the user's branch. Here forks make them with their own bash, as an attacker
// steered by a file would; merge refuses those forks, names what they bring, and merges the rest
// only with --clean-only.

const fanOutDir = (plan: string): string => {
  const runs = join(dirname(plan), 'runs');
  return join(
    runs,
    readdirSync(runs).find((d) => existsSync(join(runs, d, 'manifest.json')))!,
  );
};

describe('merge refuses gitlinks and symlinks leaving the repository', () => {
  it('names each such fork, merges nothing by default, and only the harmless forks with --clean-only', async () => {
    const repo = repoWith({ 'a.ts': 'export const fetchData = 1;\n', 'lib/b.ts': 'export const b = 2;\n' });
    const base = git(repo, 'rev-parse', 'HEAD');
    const plan = writePlan(
      repo,
      [
        'rename fetchData to loadData in a.ts',
        'run `ln -s /etc/passwd lib/passwd` and report',
        'run `ln -s ../../outside lib/up` and report',
        'run `ln -s ../.git/config lib/cfg` and report',
        'run `ln -s ../a.ts lib/alias` and report',
        'run `mkdir sub && cd sub && git init -q && git -c user.name=x -c user.email=x@x commit -q --allow-empty -m x` and report',
      ],
      { isolation: 'worktree', allow: ['read_file', 'edit_file', 'write_file', 'bash'], sandbox: 'none' },
    );
    const ran = await forkcache(['run', plan, '--json']);
    expect(ran.stderr).not.toMatch(/Error:/);
    const dir = fanOutDir(plan);

    const refused = await forkcache(['merge', dir]);
    expect(refused.code).toBe(5); // nothing merged
    expect(refused.stdout).toMatch(/^refused +f02 .*brings lib\/passwd \(a symlink to "\/etc\/passwd"\)$/m);
    expect(refused.stdout).toMatch(/^refused +f03 .*brings lib\/up \(a symlink to "\.\.\/\.\.\/outside"\)$/m);
    expect(refused.stdout).toMatch(/^refused +f04 .*brings lib\/cfg \(a symlink to "\.\.\/\.git\/config"\)$/m);
    expect(refused.stdout).toMatch(/^refused +f06 .*brings sub \(a gitlink to [0-9a-f]{10}\)$/m);
    expect(refused.stdout).toMatch(
      /nothing was merged: 4 fork\(s\) bring a gitlink or a symlink leaving the repository/,
    );
    expect(git(repo, 'rev-parse', 'HEAD')).toBe(base);

    const merged = await forkcache(['merge', dir, '--clean-only']);
    expect(merged.code).toBe(4); // some merged, the refused ones left out
    expect(merged.stdout).toMatch(/\(2 fork\(s\) in one commit\)/);
    expect(merged.stdout).not.toContain('retry-plan');
    const tree = git(repo, 'ls-tree', '-r', '--format=%(objectmode) %(path)', 'HEAD').split('\n');
    expect(tree.sort()).toEqual(['100644 a.ts', '100644 lib/b.ts', '120000 lib/alias'].sort());
    expect(readFileSync(join(repo, 'lib/alias'), 'utf8')).toBe('export const loadData = 1;\n');
  });
});
