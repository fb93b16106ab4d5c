import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { ForkcacheError } from '../../errors.ts';
import { carryCommit, type MergePass, mergePass, worktreeRepo } from './merge-forks.ts';
import type { RunReview } from './run-forks.ts';
import type { HostGit } from '../../tools/host-git.ts';

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
    throw new ForkcacheError('INVALID_ARGUMENT', `push: ${run.dir} recorded no base commit (an older forkcache)`, {
      data: { field: 'run-dir' },
    });
  const url = await repo.run(['remote', 'get-url', '--', remote], { ok: [2] });
  if (url.code !== 0)
    throw new ForkcacheError(
      'INVALID_ARGUMENT',
      `push: ${repo.top} has no remote named ${remote} (git remote -v lists them)`,
      {
        data: { field: 'remote' },
      },
    );
  return repo;
}

/**
 * Push one branch for the run's repository (for each repository of a plan over several: the
 * view's own, to its own remote of that name): a commit on the base whose parents are the base
 * and every completed fork's commit that merges cleanly (one pass, as `merge`), its message the
 * list of the forks it carries. Conflicting and refused forks are left out and reported. The
 * branch is forkcache's (`forkcache/<fanoutId>`), so it is replaced on every push of the run.
 */
export async function pushRun(run: RunReview, remote: string, branch?: string): Promise<PushResult> {
  const repo = await checkRemote(run, remote);
  const base = run.base!;
  const name = branch ?? `forkcache/${run.manifest.fanoutId}`;
  const { tree, ...pass } = await mergePass(repo, run, base, new Set());
  const result: PushResult = { ...pass, remote, branch: name, commit: undefined, description: undefined };
  if (pass.merged.length === 0) return result;
  result.commit = await carryCommit(repo, run, base, { ...pass, tree });
  result.description = await repo.out(['log', '-1', '--format=%B', result.commit]);
  try {
    await exec('git', ['push', '--quiet', '--', remote, `+${result.commit}:refs/heads/${name}`], {
      cwd: repo.top,
      env: userGitEnv(),
    });
  } catch (cause) {
    throw new ForkcacheError(
      'GIT_FAILED',
      `push: git push ${remote} ${name} failed: ${String((cause as { stderr?: unknown }).stderr ?? cause).trim()}`,
      {
        cause,
        data: { remote, branch: name },
      },
    );
  }
  return result;
}
