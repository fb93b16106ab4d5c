import { ForkcacheError } from '../../errors.ts';
import type { HostGit } from '../../tools/host-git.ts';
import { BRANCH_PREFIX } from '../../tools/worktree.ts';
import { type ForkReview, repoOfRun, type RunReview } from './run-forks.ts';

export interface MergePlan {
  /** In plan order: the forks whose commits are merged. */
  merged: ForkReview[];
  /** Every other fork, with why. */
  skipped: Array<{ fork: ForkReview; why: string }>;
  /** The commit the workspace's branch moves to; undefined when there is nothing to merge. */
  commit: string | undefined;
  /** The branch (or `HEAD` when detached) and where it was. */
  target: string;
  from: string;
}

const CONFLICT_HINT = 'nothing was merged; merge the others with --skip <fork>, then redo that fork';

/** What is in the way of updating the working tree: changes to tracked files (staged or not). */
async function refuseDirty(repo: HostGit): Promise<void> {
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

/**
 * Merge every completed fork's branch into the repository's current branch, in plan order.
 * Each merge is computed with `git merge-tree --write-tree`, in objects only: the branch, the
 * index and the working tree are untouched until every fork merged cleanly, and then move
 * once, by fast-forward to one commit whose parents are the old HEAD and each fork's commit.
 * At the first conflict nothing is applied (GIT_MERGE_CONFLICT names the fork and the files).
 */
export async function mergeForks(run: RunReview, skip: ReadonlySet<string>, dryRun: boolean): Promise<MergePlan> {
  if (run.isolation !== 'worktree')
    throw new ForkcacheError(
      'INVALID_ARGUMENT',
      `merge: ${run.manifest.fanoutId} ran in a shared workspace: its changes are in the workspace already (see forkcache diff)`,
      { data: { field: 'run-dir' } },
    );
  const repo = await repoOfRun(run);
  await refuseDirty(repo);
  const from = await repo.out(['rev-parse', '--verify', 'HEAD^{commit}']);
  const target = (await repo.run(['symbolic-ref', '--quiet', '--short', 'HEAD'], { ok: [1] })).stdout.trim() || 'HEAD';
  const plan: MergePlan = { merged: [], skipped: [], commit: undefined, target, from };
  const already = new Set((await repo.branches(BRANCH_PREFIX, { merged: from })).values());
  let tree = from;
  let head = from;
  for (const fork of run.forks) {
    const why =
      fork.status !== 'completed'
        ? `not completed (${fork.status})`
        : skip.has(fork.forkId)
          ? 'skipped (--skip)'
          : fork.commit === undefined
            ? 'no branch'
            : fork.commit === null
              ? 'no change'
              : already.has(fork.commit)
                ? 'merged already'
                : undefined;
    if (why) {
      plan.skipped.push({ fork, why });
      continue;
    }
    const result = await repo.run(
      ['merge-tree', '--write-tree', '--name-only', '--no-messages', '-z', head, fork.commit!],
      {
        ok: [1],
      },
    );
    const [written, ...named] = result.stdout.split('\0').filter(Boolean);
    const files = [...new Set(named)];
    if (result.code === 1)
      throw new ForkcacheError(
        'GIT_MERGE_CONFLICT',
        `merge: ${fork.short} (${fork.branch}) conflicts with ${plan.merged.length === 0 ? target : `${target} and the ${plan.merged.length} fork(s) before it`} in ${files.join(', ')}: ${CONFLICT_HINT}`,
        { data: { fork: fork.forkId, files } },
      );
    tree = written!;
    // an intermediate commit, so the next merge-tree finds the right merge base
    head = await repo.out(['commit-tree', tree, '-p', head, '-p', fork.commit!, '-m', `forkcache: ${fork.forkId}`]);
    plan.merged.push(fork);
  }
  if (plan.merged.length === 0 || dryRun) return plan;
  const body = plan.merged.map((f) => `${f.short} ${f.branch}: ${f.directive.split('\n')[0]!.slice(0, 120)}`);
  const message = `forkcache merge ${run.manifest.fanoutId}: ${plan.merged.length} fork(s)\n\n${body.join('\n')}\n`;
  const parents = [from, ...plan.merged.map((f) => f.commit!)].flatMap((p) => ['-p', p]);
  const ident = await repo.userIdent();
  plan.commit = (await repo.run(['commit-tree', tree, ...parents, '-m', message], { ident })).stdout.trim();
  // the one step that touches the branch and the working tree: a fast-forward, refused whole
  // (e.g. an untracked file in the way) rather than done in part
  await repo.run(['merge', '--ff-only', '--quiet', plan.commit]);
  return plan;
}
