import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { ForkcacheError } from '../../core/util/errors.ts';
import { carryCommit, type MergePass, mergePass, worktreeRepo } from './merge-forks.ts';
import type { RunReview } from './run-forks.ts';
import type { HostGit } from '../../core/tools/git/host-git.ts';

const exec = promisify(execFile);

export interface PushResult extends Omit<MergePass, 'tree'> {
  remote: string;
  /** The remote branch: `forkcache/<fanoutId>` unless named. */
  branch: string;
  /** The commit pushed (the run's base with every carried fork); undefined when none carries a change. */
  commit: string | undefined;
  /** The pushed commit's message: the branch's description, a line per fork it carries. */
  description: string | undefined;
}

/**
 * The user's own environment for the one git command that talks to their remote: their
 * credential helper, ssh agent and remote configuration are what makes a push work, as when they
 * push themselves. What forkcache holds for the API is not passed on, nor a GIT_DIR of theirs
 * that would point git elsewhere. The command reads no fork-written file: the carry commit is
 * made of objects, and the repository's config and hooks are the user's (a fork's worktree has
 * its own git dir, and its tools never write `.git`).
 */
function userGitEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of Object.keys(env))
    if (/^(ANTHROPIC|OPENAI|DASHSCOPE|DEEPSEEK|FORKCACHE)_|^GIT_(DIR|WORK_TREE|INDEX_FILE)$/.test(name))
      delete env[name];
  return env;
}

/** The run's repository, once it has the remote (an unknown one is bad input, naming the repository). */
export async function checkRemote(run: RunReview, remote: string): Promise<HostGit> {
  const repo = await worktreeRepo(run, 'push');
  if (!run.base)
    throw new ForkcacheError('INVALID_RUN_DIR', `push: ${run.dir} recorded no base commit (an older forkcache)`, {
      data: { field: 'run-dir' },
    });
  const url = await repo.run(['remote', 'get-url', '--', remote], { ok: [2] });
  if (url.code !== 0)
    throw new ForkcacheError(
      'INVALID_FLAG',
      `push: ${repo.top} has no remote named ${remote} (git remote -v lists them)`,
      {
        data: { field: 'remote' },
      },
    );
  return repo;
}

/**
 * A branch name `push --branch` may be given: what `git check-ref-format --branch` accepts (git
 * itself decides, below), and never a refspec (`a:refs/heads/b`), an option (`--force`, left
 * there by a missing value), a `..` path or an `@{...}` expression git would expand.
 */
export async function checkBranchName(name: string): Promise<void> {
  const refuse = (why: string): ForkcacheError =>
    new ForkcacheError('INVALID_FLAG', `--branch: ${why} (got ${JSON.stringify(name)})`, {
      data: { flags: ['--branch'], field: 'branch' },
    });
  if (name.startsWith('-')) throw refuse('a branch name, not an option: give --branch its value');
  if (name.includes(':')) throw refuse('a branch name, not a refspec (no ":")');
  if (name.includes('..')) throw refuse('no ".." in a branch name');
  if (name.includes('@{')) throw refuse('no "@{" in a branch name');
  try {
    await exec('git', ['check-ref-format', '--branch', name], { env: userGitEnv() });
  } catch {
    throw refuse('not a valid branch name (git check-ref-format --branch)');
  }
}

/** What `push` may do to a remote branch that holds commits its push does not carry. */
export interface PushLease {
  /** Replace the remote branch whatever it holds, as long as it is still at `expect` (git's lease). */
  force: boolean;
  /** The commit the user expects the remote branch at (default: the tip read just before the push). */
  expect?: string | undefined;
}

async function userGit(repo: HostGit, args: string[]): Promise<string> {
  return (await exec('git', args, { cwd: repo.top, env: userGitEnv() })).stdout;
}

/** The remote branch's tip, or undefined when the remote has no such branch. */
async function remoteTip(repo: HostGit, remote: string, ref: string): Promise<string | undefined> {
  const out = await userGit(repo, ['ls-remote', '--', remote, ref]);
  for (const line of out.split('\n')) {
    const [sha, name] = line.split('\t');
    if (name === ref && sha) return sha;
  }
  return undefined;
}

/** A commit forkcache made for this fan-out's push (its message's first words say so), if this repository has it. */
async function madeForThisRun(repo: HostGit, run: RunReview, commit: string): Promise<boolean> {
  if ((await repo.commitOf(commit)) === undefined) return false;
  const subject = await repo.out(['log', '-1', '--format=%s', commit]);
  return subject.startsWith(`forkcache merge ${run.manifest.fanoutId}:`);
}

/**
 * Push one branch for the run's repository (for each repository of a plan over several: the
 * view's own, to its own remote of that name): a commit on the base whose parents are the base
 * and every completed fork's commit that merges cleanly (one pass, as `merge`), its message the
 * list of the forks it carries. Conflicting and refused forks are left out and reported.
 *
 * A remote branch is never rewritten unless it is forkcache's or the user asked: the push is
 * made with git's lease on the tip read just before (so a commit pushed in between is never
 * lost), and goes ahead when the branch is new, when the push is a fast-forward of it, or when
 * its tip is a commit forkcache made for this same fan-out (a push of the run again). Any other
 * tip (a teammate's commit on `main`) is refused with GIT_PUSH_REJECTED unless `lease.force`.
 */
export async function pushRun(
  run: RunReview,
  remote: string,
  branch?: string,
  lease: PushLease = { force: false },
): Promise<PushResult> {
  const repo = await checkRemote(run, remote);
  const base = run.base!;
  const name = branch ?? `forkcache/${run.manifest.fanoutId}`;
  const { tree, ...pass } = await mergePass(repo, run, base, new Set());
  const result: PushResult = { ...pass, remote, branch: name, commit: undefined, description: undefined };
  if (pass.merged.length === 0) return result;
  result.commit = await carryCommit(repo, run, base, { ...pass, tree });
  result.description = await repo.out(['log', '-1', '--format=%B', result.commit]);
  const ref = `refs/heads/${name}`;
  let tip: string | undefined;
  try {
    tip = await remoteTip(repo, remote, ref);
  } catch (cause) {
    throw gitFailed(remote, name, cause);
  }
  const expected = lease.force && lease.expect !== undefined ? lease.expect : (tip ?? '');
  if (tip !== undefined && !lease.force) {
    // a tip this repository does not have cannot be an ancestor of a commit made here
    const ours =
      ((await repo.commitOf(tip)) !== undefined && (await repo.isAncestor(tip, result.commit))) ||
      (await madeForThisRun(repo, run, tip));
    if (!ours)
      throw new ForkcacheError(
        'GIT_PUSH_REJECTED',
        `push: ${remote} ${name} is at ${tip.slice(0, 10)}, which the push does not carry (not a fast-forward, and ` +
          `not a commit forkcache pushed for ${run.manifest.fanoutId}); nothing was pushed. Push to a branch of ` +
          `its own (the default forkcache/${run.manifest.fanoutId}), or pass --force-with-lease to replace it.`,
        { data: { remote, branch: name, tip } },
      );
  }
  try {
    await userGit(repo, [
      'push',
      '--quiet',
      `--force-with-lease=${ref}:${expected}`,
      '--',
      remote,
      `${result.commit}:${ref}`,
    ]);
  } catch (cause) {
    const stderr = String((cause as { stderr?: unknown }).stderr ?? '');
    if (/stale info|rejected/.test(stderr))
      throw new ForkcacheError(
        'GIT_PUSH_REJECTED',
        `push: ${remote} ${name} moved since it was read (or is not at the lease's commit); nothing was pushed: ${stderr.trim()}`,
        { cause, data: { remote, branch: name } },
      );
    throw gitFailed(remote, name, cause);
  }
  return result;
}

function gitFailed(remote: string, name: string, cause: unknown): ForkcacheError {
  return new ForkcacheError(
    'GIT_FAILED',
    `push: git push ${remote} ${name} failed: ${String((cause as { stderr?: unknown }).stderr ?? cause).trim()}`,
    { cause, data: { remote, branch: name } },
  );
}
