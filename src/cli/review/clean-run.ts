import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { branchOf, discardWorktree } from '../../tools/worktree.ts';
import { repoOfRun, type RunReview } from './run-forks.ts';

export interface CleanStep {
  kind: 'worktree' | 'branch';
  /** The worktree's path or the branch's name. */
  name: string;
  /** A branch's commit (printed, so a branch removed by mistake can be made again). */
  commit?: string;
  /** Whether that commit is in the repository's HEAD. */
  merged?: boolean;
}

export interface CleanResult {
  removed: CleanStep[];
  /** What looked like the run's but is left alone, with why. */
  kept: Array<{ name: string; why: string }>;
}

/**
 * Remove a worktree run's worktrees and branches. Only what the run made: a worktree at
 * `<fan-out dir>/worktrees/<forkId>` and a branch `forkcache/<forkId>` for the fork ids of the
 * manifest, and a branch only when it contains the run's recorded base. Running it again
 * removes nothing more; `dryRun` lists and changes nothing.
 */
export async function cleanRun(run: RunReview, dryRun: boolean): Promise<CleanResult> {
  const out: CleanResult = { removed: [], kept: [] };
  if (run.isolation !== 'worktree') return out;
  const repo = await repoOfRun(run);
  const root = join(run.dir, 'worktrees');
  const ids = new Set(run.forks.map((f) => f.forkId));
  if (existsSync(root))
    for (const name of readdirSync(root).sort()) {
      if (!ids.has(name)) {
        out.kept.push({ name: join(root, name), why: 'not a fork of this run' });
        continue;
      }
      out.removed.push({ kind: 'worktree', name: join(root, name) });
      if (!dryRun) await discardWorktree(repo, join(root, name));
    }
  if (!dryRun) await repo.run(['worktree', 'prune']);
  const head = await repo.out(['rev-parse', '--verify', 'HEAD^{commit}']);
  for (const fork of run.forks) {
    const branch = branchOf(fork.forkId);
    const tip = await repo.commitOf(`refs/heads/${branch}`);
    if (tip === undefined) continue;
    if (run.base && !(await repo.isAncestor(run.base, tip))) {
      out.kept.push({ name: branch, why: `it does not contain the run's base ${run.base.slice(0, 10)}` });
      continue;
    }
    out.removed.push({ kind: 'branch', name: branch, commit: tip, merged: await repo.isAncestor(tip, head) });
    if (!dryRun) await repo.run(['update-ref', '-d', `refs/heads/${branch}`, tip]);
  }
  return out;
}
