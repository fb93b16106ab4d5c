import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { wholeWorktreesLine } from '../../src/cli/output/worktree-line.ts';
import { HostGit } from '../../src/core/tools/git/host-git.ts';
import { wholeWorktreeLimit } from '../../src/core/tools/git/worktree-budget.ts';
import { git, repoWith } from '../core/tools/git-fixture.ts';
import { writePlan } from './review-fixture.ts';
import { forkcache } from './run-cli.ts';

// A run of whole worktrees goes only as many forks at a time as the disk budget allows
// (issue 34): a user watching 300 forks go three by three is told so, and what changes it.

/** Incompressible files, so the git dir is about the checkout's size and the limit small. */
const repo = (): string =>
  repoWith(
    Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`src/f${i}.txt`, randomBytes(24_000).toString('base64')])),
  );

const limitOf = async (dir: string): Promise<number> => {
  const host = await HostGit.open(dir, 'INVALID_OPTION');
  return wholeWorktreeLimit(host, git(dir, 'rev-parse', 'HEAD'));
};

describe('the whole-worktrees line', () => {
  it('names the budget’s limit, the fork count and the plan fields that change it', async () => {
    const dir = repo();
    const limit = await limitOf(dir);
    expect(limit).toBeLessThan(10);
    const line = await wholeWorktreesLine({ workspace: dir, forks: 10 });
    expect(line).toMatch(new RegExp(`^worktrees: ${limit} of 10 forks at a time \\(\\d+\\.\\d MB\\): `));
    expect(line).toContain('"limits": {"maxWorktrees": N}');
    expect(line).toContain('"sparseWorktrees": true');
    // as many forks as the budget allows: nothing waits, nothing said
    expect(await wholeWorktreesLine({ workspace: dir, forks: limit })).toBeUndefined();
  });

  it('with limits.maxWorktrees: that number, said to come from the plan', async () => {
    const dir = repo();
    expect(await wholeWorktreesLine({ workspace: dir, forks: 10, maxWorktrees: 3 })).toBe(
      'worktrees: 3 of 10 forks at a time: "limits": {"maxWorktrees": 3} in the plan; raise it for more at once',
    );
    expect(await wholeWorktreesLine({ workspace: dir, forks: 10, maxWorktrees: 10 })).toBeUndefined();
  });

  it('a plan over several repositories: each repository’s own forks against its own limit', async () => {
    const root = repoWith({ 'README.md': 'top\n' });
    const a = repo();
    const b = repo();
    git(root, 'clone', '--quiet', a, 'a');
    git(root, 'clone', '--quiet', b, 'b');
    const fields = [
      ...Array.from({ length: 9 }, () => ({ repo: 'a' })),
      ...Array.from({ length: 2 }, () => ({ repo: 'b' })),
    ];
    const line = await wholeWorktreesLine({ workspace: root, repos: ['a', 'b'], fields, forks: 11, maxWorktrees: 2 });
    expect(line).toBe(
      'worktrees: a: 2 of 9 forks at a time: "limits": {"maxWorktrees": 2} in the plan; raise it for more at once',
    );
  });

  it('forkcache run prints it before the forks start', async () => {
    const dir = repo();
    const plan = writePlan(dir, ['rename f0 in src/f0.txt', 'rename f1 in src/f1.txt', 'rename f2 in src/f2.txt'], {
      isolation: 'worktree',
      limits: { maxWorktrees: 1 },
    });
    const ran = await forkcache(['run', plan]);
    const lines = ran.stderr.split('\n');
    const at = lines.findIndex((l) => l.startsWith('worktrees: 1 of 3 forks at a time'));
    expect(at, ran.stderr).toBeGreaterThan(lines.findIndex((l) => l.startsWith('forkcache run: 3 forks')));
  });
});
