import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { ForkcacheError } from '../errors.ts';

const run = promisify(execFile);

// A fixed identity for the commits forkcache makes in a fork's worktree: a CI box or a fresh
// container may have no git identity at all.
const GIT_ENV = {
  GIT_AUTHOR_NAME: 'forkcache',
  GIT_AUTHOR_EMAIL: 'forkcache@localhost',
  GIT_COMMITTER_NAME: 'forkcache',
  GIT_COMMITTER_EMAIL: 'forkcache@localhost',
};

async function git(cwd: string, args: string[]): Promise<string> {
  const { stdout } = await run('git', ['-C', cwd, ...args], {
    env: { ...process.env, ...GIT_ENV },
    maxBuffer: 16 * 1024 * 1024,
  });
  return stdout.trim();
}

/** What a fork did in its own worktree: where, on which branch, and the change as a diff stat. */
export interface WorktreeResult {
  path: string;
  branch: string;
  base: string;
  /** The commit holding the fork's changes; null when it changed nothing. */
  commit: string | null;
  diffStat: string;
}

export interface Worktree {
  path: string;
  branch: string;
  base: string;
  /** The fork's workspace inside the worktree (the same place relative to the repository). */
  workspace: string;
}

/** The repository that holds `workspace`, or an error saying isolation needs one. */
export async function repositoryOf(workspace: string): Promise<{ top: string; head: string }> {
  try {
    return {
      top: await git(workspace, ['rev-parse', '--show-toplevel']),
      head: await git(workspace, ['rev-parse', 'HEAD']),
    };
  } catch (cause) {
    throw new ForkcacheError(
      'INVALID_ARGUMENT',
      `isolation: 'worktree' needs the workspace in a git repository with a commit; ${workspace} is not`,
      { cause, data: { field: 'isolation' } },
    );
  }
}

/**
 * A worktree on a new branch `forkcache/<forkId>` at the repository's HEAD, so parallel forks
 * editing one repository never touch the same files. An existing one (a resumed fork) is reused.
 */
export async function openWorktree(workspace: string, root: string, forkId: string): Promise<Worktree> {
  const repo = await repositoryOf(workspace);
  const path = join(root, forkId);
  const branch = `forkcache/${forkId}`;
  if (!existsSync(path)) await git(repo.top, ['worktree', 'add', '--quiet', '-b', branch, path, repo.head]);
  return { path, branch, base: repo.head, workspace: join(path, relative(repo.top, workspace)) };
}

/** Commit what the fork changed on its branch and describe it. */
export async function closeWorktree(tree: Worktree, message: string): Promise<WorktreeResult> {
  await git(tree.path, ['add', '--all']);
  const changed = (await git(tree.path, ['status', '--porcelain'])) !== '';
  if (changed) await git(tree.path, ['commit', '--quiet', '--no-verify', '-m', message]);
  const head = await git(tree.path, ['rev-parse', 'HEAD']);
  const diffStat = await git(tree.path, ['diff', '--stat', tree.base, head]);
  return { path: tree.path, branch: tree.branch, base: tree.base, commit: head === tree.base ? null : head, diffStat };
}
