import { describe, expect, it } from 'vitest';
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { git, repoWith } from '../core/tools/git-fixture.ts';
import { writePlan } from './review-fixture.ts';
import { forkcache, lastJson } from './run-cli.ts';

// Issue 42: `clean` removed the forks' branches and left the integration step's branch
// (`forkcache/<fanOutId>-integration`) behind for ever, and called its worktree, when one was
// left, "not a fork of this run". The integration branch holds the integrated tree: it stays
// while that tree is in no other place than it (kept and said so, as an unmerged fork's branch
// is, unless --force), and goes with the run once its forks are merged.

const files = { 'a.txt': 'alpha one\n', 'b.txt': 'alpha two\n' };
const CHECK = '! grep -rl --exclude-dir=.forkcache-home BROKEN .';
const rename = (file: string) => ({ directive: `rename alpha to beta in ${file}`, file });

const branches = (repo: string): string[] =>
  git(repo, 'for-each-ref', '--format=%(refname:short)', 'refs/heads/forkcache/').split('\n').filter(Boolean);

describe('clean and the integration branch (issue 42)', () => {
  it('keeps the integration branch while its tree is not merged, says so; merge --clean-only keeps it; clean removes it and its worktree after', async () => {
    const repo = repoWith(files);
    const planPath = writePlan(repo, [rename('a.txt'), rename('b.txt')] as never, {
      isolation: 'worktree',
      allow: ['read_file', 'edit_file', 'write_file', 'bash'],
      sandbox: 'none',
      integrationCheck: CHECK,
    });
    const ran = await forkcache(['run', planPath, '--json']);
    expect(ran.code).toBe(0);
    const branch: string = lastJson(ran.stdout)['integration']['repos'][0]['branch'];
    const runs = join(dirname(planPath), 'runs');
    const [fanOutId] = readdirSync(runs).filter((d) => existsSync(join(runs, d, 'manifest.json')));
    const dir = join(runs, fanOutId!);
    expect(branch).toBe(`forkcache/${fanOutId}-integration`);

    // nothing merged yet: the integrated tree lives only on its branch (and the forks')
    const early = await forkcache(['clean', dir, '--json']);
    expect(early.code).toBe(1);
    const kept = lastJson(early.stdout)['kept'] as Array<{ name: string; why: string }>;
    expect(kept.find((k) => k.name === branch)?.why).toMatch(
      /^the integrated tree, not merged into HEAD .*--force removes it$/,
    );
    expect(branches(repo)).toContain(branch);

    // merging (--clean-only too) leaves it: its forks are now in HEAD
    const merged = await forkcache(['merge', dir, '--clean-only', '--json']);
    expect(merged.code).toBe(0);
    expect(branches(repo)).toContain(branch);

    // a worktree of the integration left behind (a step that was stopped) is the run's too
    const tree = join(dir, 'worktrees', `${fanOutId}-integration`);
    git(repo, 'worktree', 'add', '--quiet', tree, branch);
    const dry = await forkcache(['clean', dir, '--dry-run', '--json']);
    const listed = lastJson(dry.stdout) as { removed: Array<{ name: string; merged?: boolean }>; kept: unknown[] };
    expect(listed.kept).toEqual([]);
    expect(listed.removed.find((s) => s.name === branch)).toMatchObject({ merged: true });
    expect(listed.removed.map((s) => s.name)).toContain(tree);

    const cleaned = await forkcache(['clean', dir]);
    expect(cleaned.code).toBe(0);
    expect(cleaned.stdout).toContain(`removed branch ${branch} (`);
    expect(cleaned.stdout).toContain(`removed worktree ${tree}`);
    expect(branches(repo)).toEqual([]);
    expect(existsSync(tree)).toBe(false);
    expect(git(repo, 'worktree', 'list', '--porcelain')).not.toContain('-integration');
    expect((await forkcache(['clean', dir])).stdout).toContain('nothing to remove');
  });
});
