import { lstatSync, readFileSync, realpathSync } from 'node:fs';
import { dirname, join, sep } from 'node:path';
import { ForkcacheError } from '../../util/errors.ts';

/**
 * A fork's worktree as git linked it: the worktree directory and its private git dir
 * (`<common git dir>/worktrees/<name>`). The git dir lives in the user's repository, out of
 * the fork's reach; the `.git` file in the worktree is the fork's to write, so it is checked,
 * never followed.
 */
export interface WorktreeLink {
  path: string;
  gitDir: string;
}

function tampered(path: string, why: string): ForkcacheError {
  return new ForkcacheError(
    'GIT_WORKTREE_TAMPERED',
    `worktree ${path}: ${why}; forkcache runs no git there (the fork's changes are not committed)`,
    { data: { path } },
  );
}

function readSmall(path: string): string | undefined {
  try {
    if (!lstatSync(path).isFile()) return undefined;
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * The link of the worktree at `path`, derived from its `.git` file and checked both ways: the
 * `.git` file (a regular file, not a link) names a git dir directly under
 * `<commonDir>/worktrees/`, that git dir's `gitdir` file points back at this worktree's
 * `.git`, and its `commondir` leads to `commonDir`. Only `git worktree add` writes such a
 * pair, and a fork can write neither the git dir nor its back-pointer. `expected`, when known
 * (the link recorded at creation), must be the one found.
 */
export function checkWorktreeLink(path: string, commonDir: string, expected?: WorktreeLink): WorktreeLink {
  let root: string;
  try {
    if (!lstatSync(path).isDirectory()) throw tampered(path, 'not a directory');
    root = realpathSync(path);
  } catch (err) {
    if (err instanceof ForkcacheError) throw err;
    throw tampered(path, 'the worktree directory is gone');
  }
  const dotGit = readSmall(join(root, '.git'));
  if (dotGit === undefined) throw tampered(path, '.git is not the regular file git wrote');
  const named = /^gitdir: (.+)\n?$/.exec(dotGit)?.[1];
  if (!named) throw tampered(path, '.git does not hold one gitdir line');
  let gitDir: string;
  try {
    gitDir = lstatSync(named).isDirectory() ? realpathSync(named) : '';
  } catch {
    gitDir = '';
  }
  if (gitDir === '') {
    throw tampered(path, `.git points at ${named}, which is not a git dir`);
  }
  const worktrees = join(realpathSync(commonDir), 'worktrees');
  if (dirname(gitDir) !== worktrees || !gitDir.startsWith(worktrees + sep))
    throw tampered(path, `.git points at ${gitDir}, outside ${worktrees}`);
  const back = readSmall(join(gitDir, 'gitdir'))?.trim();
  if (back === undefined || back !== join(root, '.git'))
    throw tampered(path, `the git dir ${gitDir} belongs to ${back ?? 'no worktree'}`);
  const common = readSmall(join(gitDir, 'commondir'))?.trim();
  if (common !== '../..') throw tampered(path, `the git dir ${gitDir} has another common dir`);
  const link = { path: root, gitDir };
  if (expected && (expected.path !== link.path || expected.gitDir !== link.gitDir))
    throw tampered(path, `.git points at ${gitDir}, not at ${expected.gitDir} which forkcache created`);
  return link;
}
