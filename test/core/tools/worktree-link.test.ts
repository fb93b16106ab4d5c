import { cpSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HostGit } from '../../../src/core/tools/git/host-git.ts';
import { openWorktree } from '../../../src/core/tools/git/worktree.ts';
import { checkWorktreeLink } from '../../../src/core/tools/git/worktree-link.ts';
import { git, repoWith } from './git-fixture.ts';

async function twoWorktrees() {
  const repo = repoWith({ 'a.ts': '1\n' });
  const host = await HostGit.open(repo, 'INVALID_OPTION');
  const root = mkdtempSync(join(tmpdir(), 'fc-wt-'));
  const base = git(repo, 'rev-parse', 'HEAD');
  const open = (forkId: string) => openWorktree(host, { root, forkId, base, workspace: host.top });
  return { host, one: await open('fo1-f01'), two: await open('fo1-f02') };
}

describe("a worktree's .git is checked, never followed", () => {
  it('accepts the link git made, and refuses every way a fork can rewrite it', async () => {
    const { host, one, two } = await twoWorktrees();
    expect(checkWorktreeLink(one.path, host.commonDir, one.link)).toEqual(one.link);
    const dotGit = join(one.path, '.git');
    const attempts: Array<[string, () => void, RegExp]> = [
      ["a sibling's git dir", () => writeFileSync(dotGit, `gitdir: ${two.link.gitDir}\n`), /belongs to .*fo1-f02/],
      ['a git dir of its own', () => writeFileSync(dotGit, 'gitdir: .evil\n'), /not a git dir|outside/],
      [
        'a copy of its own git dir, back-pointer and all',
        () => {
          const copy = join(one.path, 'copy');
          cpSync(one.link.gitDir, copy, { recursive: true });
          writeFileSync(dotGit, `gitdir: ${copy}\n`);
        },
        /outside .*worktrees/,
      ],
      [
        'a symlink to the real .git file',
        () => {
          const real = join(one.path, 'real-dot-git');
          writeFileSync(real, `gitdir: ${one.link.gitDir}\n`);
          rmSync(dotGit);
          symlinkSync(real, dotGit);
        },
        /not the regular file git wrote/,
      ],
      [
        'a directory',
        () => {
          rmSync(dotGit);
          cpSync(one.link.gitDir, dotGit, { recursive: true });
        },
        /not the regular file git wrote/,
      ],
      ['two lines', () => writeFileSync(dotGit, `gitdir: ${one.link.gitDir}\ngitdir: /tmp\n`), /one gitdir line/],
    ];
    for (const [what, tamper, message] of attempts) {
      rmSync(dotGit, { recursive: true, force: true });
      writeFileSync(dotGit, `gitdir: ${one.link.gitDir}\n`);
      tamper();
      expect(() => checkWorktreeLink(one.path, host.commonDir, one.link), what).toThrow(
        expect.objectContaining({ code: 'GIT_WORKTREE_TAMPERED', message: expect.stringMatching(message) }),
      );
      await expect(host.worktree(one.path, one.link), what).rejects.toMatchObject({ code: 'GIT_WORKTREE_TAMPERED' });
    }
  });
});
