import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, repoWith } from '../core/tools/git-fixture.ts';
import { writePlan } from './review-fixture.ts';
import { forkcache, lastJson } from './run-cli.ts';

// Issue 42: `python3 -m py_compile {file}` writes `__pycache__/*.pyc`, and 256 of them went into
// the fork branches, the merge commit and the pushed branch. What a check writes is not the
// fork's work: the commit leaves it out, and the run says so.

const hasPython = (() => {
  try {
    execFileSync('python3', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

const files = {
  'pkg/a.py': 'def alpha():\n    return 1\n',
  'pkg/b.py': 'from pkg.a import alpha\n\nvalue = alpha()\n',
  'pkg/c.py': 'from pkg.a import alpha\n\nother = alpha() + 1\n',
};

/** Every path in every commit reachable from `refs` (the fork branches, the merge commit). */
const committedPaths = (repo: string, ...refs: string[]): string[] =>
  git(repo, 'log', '--name-only', '--format=', ...refs)
    .split('\n')
    .filter(Boolean);

/** A repository of `tree`, and a worktree plan renaming alpha in each of the Python files, py_compile as the check. */
function renamePlan(tree: Record<string, string>): { repo: string; targets: string[]; plan: string } {
  const repo = repoWith(tree);
  const targets = Object.keys(files);
  const plan = writePlan(
    repo,
    targets.map((file) => ({ directive: `rename alpha to alphaOne in ${file}`, file })) as never,
    { isolation: 'worktree', check: 'python3 -m py_compile {file}' },
  );
  return { repo, targets, plan };
}

describe.skipIf(!hasPython)("a check's outputs never enter a fork's commit (issue 42)", () => {
  it('py_compile as the check: no .pyc in the fork branches or the merge commit; the run names what it left out', async () => {
    const { repo, targets, plan } = renamePlan(files);
    const ran = await forkcache(['run', plan, '--json']);
    expect(ran.code).toBe(0);
    const summary = lastJson(ran.stdout);
    expect(summary.forks.completed).toBe(3);
    // each fork's check wrote pkg/__pycache__/ in its worktree; its commit left it out
    for (const fork of summary.fork_results) expect(fork.left_out).toEqual(['pkg/__pycache__/']);
    const forkBranches = git(repo, 'for-each-ref', '--format=%(refname)', 'refs/heads/forkcache/').split('\n');
    expect(forkBranches).toHaveLength(3);
    const inForks = committedPaths(repo, ...forkBranches, '^main');
    expect(inForks.sort()).toEqual(targets);
    // the human summary says what was left out
    const human = await forkcache([
      'run',
      writePlan(repoWith(files), [{ directive: 'rename alpha to alphaOne in pkg/a.py', file: 'pkg/a.py' }] as never, {
        isolation: 'worktree',
        check: 'python3 -m py_compile {file}',
      }),
    ]);
    expect(human.stdout).toMatch(/left out {2}1 path\(s\) the check wrote, in 1 fork\(s\)' commits \(__pycache__\/\)/);

    const runs = join(dirname(plan), 'runs');
    const [runDir] = readdirSync(runs).filter((d) => existsSync(join(runs, d, 'manifest.json')));
    const merged = await forkcache(['merge', join(runs, runDir!)]);
    expect(merged.code).toBe(0);
    const inMerge = committedPaths(repo, 'main', '-1', '-m');
    expect(inMerge.length).toBeGreaterThan(0);
    expect(committedPaths(repo, 'main').filter((p) => p.endsWith('.pyc'))).toEqual([]);
    expect(git(repo, 'ls-tree', '-r', '--name-only', 'main').split('\n').sort()).toEqual(targets);
    expect(git(repo, 'show', 'main:pkg/b.py')).toContain('alphaOne()');
  });

  it('py_compile under a .gitignore that lists __pycache__/: every fork commits (git would refuse to exclude what it ignores)', async () => {
    const { repo, targets, plan } = renamePlan({ ...files, '.gitignore': '__pycache__/\n' });
    const ran = await forkcache(['run', plan, '--json']);
    const summary = lastJson(ran.stdout);
    expect(summary.fork_results.map((f: { status: string }) => f.status)).toEqual(targets.map(() => 'completed'));
    expect(ran.code).toBe(0);
    const forkBranches = git(repo, 'for-each-ref', '--format=%(refname)', 'refs/heads/forkcache/').split('\n');
    expect(committedPaths(repo, ...forkBranches, '^main').sort()).toEqual(targets);
  });
});
