import { ForkcacheError } from '../../core/util/errors.ts';
import type { HostGit } from '../../core/tools/git/host-git.ts';
import { BRANCH_PREFIX } from '../../core/tools/git/worktree.ts';
import { linksLeaving } from './merge-links.ts';
import { writeRetryPlan } from './retry-plan.ts';
import { type ForkReview, repoOfRun, type RunReview } from './run-forks.ts';

export interface MergePlan {
  /** In plan order: the forks whose commits are merged. */
  merged: ForkReview[];
  /** Every other fork, with why. */
  skipped: Array<{ fork: ForkReview; why: string }>;
  /** Completed forks that conflict with the result so far (the target and the clean forks before them). */
  conflicts: Array<{ fork: ForkReview; files: string[] }>;
  /** Completed forks whose commit brings a gitlink or a symlink leaving the repository: never merged. */
  refused: Array<{ fork: ForkReview; paths: string[] }>;
  /** The commit the workspace's branch moves to; undefined when nothing was merged. */
  commit: string | undefined;
  /** The branch (or `HEAD` when detached) and where it was. */
  target: string;
  from: string;
  /** `cleanOnly`: the plan that redoes the conflicting forks on the new HEAD (`forkcache run` it). */
  retryPlan: string | undefined;
}

interface MergeOptions {
  skip: ReadonlySet<string>;
  dryRun: boolean;
  /** Merge the forks that merge cleanly even when others conflict, and write a retry plan for those. */
  cleanOnly: boolean;
  /** Write the retry plan for the conflicting forks (default); a plan over several repositories writes one for all. */
  retryPlan?: boolean;
  /**
   * The run wrote a retry plan, and this merge is of a runs directory: its forks not merged yet
   * are the retry plan's run's to merge (they conflicted once, and would again), so skipped.
   */
  redone?: boolean;
  /**
   * Forks to merge whatever their own status (the integrated forks of an integration step:
   * a fork whose local check failed is one). Without it, only `completed` forks are tried.
   */
  candidates?: ReadonlySet<string>;
}

/** The repository of a worktree run; a shared-workspace run has no branches to `merge` or `push`. */
export function worktreeRepo(run: RunReview, command: string): Promise<HostGit> {
  if (run.isolation !== 'worktree')
    throw new ForkcacheError(
      'INVALID_RUN_DIR',
      `${command}: ${run.manifest.fanoutId} ran in a shared workspace: its changes are in the workspace already (see forkcache diff)`,
      { data: { field: 'run-dir' } },
    );
  return repoOfRun(run);
}

/** What is in the way of updating the working tree: changes to tracked files (staged or not). */
export async function refuseDirty(repo: HostGit): Promise<void> {
  // not trimmed: each entry starts with its two status columns, a space included
  const { stdout: dirty } = await repo.run([
    'status',
    '--porcelain=v1',
    '-z',
    '--untracked-files=no',
    '--ignore-submodules=all',
  ]);
  if (dirty === '') return;
  const files = dirty
    .split('\0')
    .filter(Boolean)
    .map((entry) => entry.slice(3));
  throw new ForkcacheError(
    'GIT_DIRTY_WORKTREE',
    `merge: ${repo.top} has uncommitted changes (${files.slice(0, 5).join(', ')}${files.length > 5 ? ', …' : ''}): commit or stash them first`,
    { data: { files } },
  );
}

/** Why a fork is not tried at all; undefined for a fork to merge. */
function notTried(
  fork: ForkReview,
  skip: ReadonlySet<string>,
  already: ReadonlySet<string>,
  candidates: ReadonlySet<string> | undefined,
  redone = false,
): string | undefined {
  // only `completed` is mergeable: every other status (no_change, capped, not_done …) is not done,
  // unless an integration step decided (its candidates)
  if (candidates !== undefined ? !candidates.has(fork.forkId) : fork.status !== 'completed')
    return candidates !== undefined && fork.status === 'completed'
      ? 'not integrated'
      : `not completed (${fork.status})`;
  if (skip.has(fork.forkId)) return 'skipped (--skip)';
  if (fork.commit === undefined) return 'no branch';
  if (fork.commit === null) return 'no change';
  if (already.has(fork.commit)) return 'merged already';
  if (redone) return REDONE;
  return undefined;
}

/** Why a fork is not merged from its own run: the run of its retry plan, merged after it, redoes it. */
export const REDONE = 'redone by the run of its retry plan';

export type MergePass = Pick<MergePlan, 'merged' | 'skipped' | 'conflicts' | 'refused'> & {
  /** The tree of `from` with every merged fork's change. */
  tree: string;
};

/**
 * Try every completed fork, in plan order, against the result so far (`from` and the clean
 * forks before it) with `git merge-tree --write-tree`: git's object store only, no index, no
 * working tree, so every conflict is found in one pass and nothing of the user's moves.
 */
export async function mergePass(
  repo: HostGit,
  run: RunReview,
  from: string,
  skip: ReadonlySet<string>,
  candidates?: ReadonlySet<string>,
  redone = false,
): Promise<MergePass> {
  const pass: MergePass = { merged: [], skipped: [], conflicts: [], refused: [], tree: from };
  const already = new Set((await repo.branches(BRANCH_PREFIX, { merged: from })).values());
  let head = from;
  for (const fork of run.forks) {
    const why = notTried(fork, skip, already, candidates, redone);
    if (why) {
      pass.skipped.push({ fork, why });
      continue;
    }
    const links = await linksLeaving(
      repo,
      run.base ?? (await repo.out(['merge-base', from, fork.commit!])),
      fork.commit!,
    );
    if (links.length > 0) {
      pass.refused.push({ fork, paths: links });
      continue;
    }
    const result = await repo.run(
      ['merge-tree', '--write-tree', '--name-only', '--no-messages', '-z', head, fork.commit!],
      { ok: [1] },
    );
    const [written, ...named] = result.stdout.split('\0').filter(Boolean);
    if (result.code === 1) {
      pass.conflicts.push({ fork, files: [...new Set(named)] });
      continue;
    }
    pass.tree = written!;
    // an intermediate commit, so the next merge-tree finds the right merge base
    head = await repo.out([
      'commit-tree',
      pass.tree,
      '-p',
      head,
      '-p',
      fork.commit!,
      '-m',
      `forkcache: ${fork.forkId}`,
    ]);
    pass.merged.push(fork);
  }
  return pass;
}

/**
 * The one commit that carries `pass`'s forks onto `from`: parents `from` and each fork's commit
 * (an octopus: `git log --first-parent` shows one step), the message listing every fork.
 */
export async function carryCommit(repo: HostGit, run: RunReview, from: string, pass: MergePass): Promise<string> {
  const body = pass.merged.map((f) => `${f.short} ${f.branch}: ${f.directive.split('\n')[0]!.slice(0, 120)}`);
  const message = `forkcache merge ${run.manifest.fanoutId}: ${pass.merged.length} fork(s)\n\n${body.join('\n')}\n`;
  const parents = [from, ...pass.merged.map((f) => f.commit!)].flatMap((p) => ['-p', p]);
  const ident = await repo.userIdent();
  return (await repo.run(['commit-tree', pass.tree, ...parents, '-m', message], { ident })).stdout.trim();
}

/**
 * Merge every completed fork's branch into the repository's current branch, in plan order, in
 * one pass (`mergePass`). Then: with no conflict and nothing refused, one commit
 * (`carryCommit`) reached by fast-forward; otherwise nothing moves, unless `cleanOnly`, which
 * merges the clean forks the same way and writes the conflicting ones as a retry plan.
 */
export async function mergeForks(run: RunReview, options: MergeOptions): Promise<MergePlan> {
  const repo = await worktreeRepo(run, 'merge');
  await refuseDirty(repo);
  const from = await repo.out(['rev-parse', '--verify', 'HEAD^{commit}']);
  const target = (await repo.run(['symbolic-ref', '--quiet', '--short', 'HEAD'], { ok: [1] })).stdout.trim() || 'HEAD';
  const { tree: _tree, ...pass } = await mergePass(repo, run, from, options.skip, options.candidates, options.redone);
  const plan: MergePlan = { ...pass, commit: undefined, target, from, retryPlan: undefined };
  const blocked = plan.conflicts.length > 0 || plan.refused.length > 0;
  if (options.dryRun || (blocked && !options.cleanOnly)) return plan;
  if (plan.merged.length > 0) {
    plan.commit = await carryCommit(repo, run, from, { ...pass, tree: _tree });
    // the one step that touches the branch and the working tree: a fast-forward, refused whole
    // (e.g. an untracked file in the way) rather than done in part
    await repo.run(['merge', '--ff-only', '--quiet', plan.commit]);
  }
  if (plan.conflicts.length > 0 && options.retryPlan !== false)
    plan.retryPlan = writeRetryPlan(
      run,
      plan.conflicts.map((c) => c.fork),
    );
  return plan;
}
