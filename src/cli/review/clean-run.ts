import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { BRANCH_PREFIX, branchOf, releaseStaleEntries, removeTrees } from '../../core/tools/git/worktree.ts';
import { detachDisk, diskImageOf } from '../../core/tools/git/workspace-disk.ts';
import { forkIdOf } from '../../core/engine/fan-out/types.ts';
import type { HostGit } from '../../core/tools/git/host-git.ts';
import { integrationIdOf } from '../../core/run-dir/integration.ts';
import { repoOfRun, runRepos, type RunReview } from './run-forks.ts';

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
 * Whether everything the integration branch holds is in HEAD: its commit is one merge of the
 * repository's HEAD of then and the integrated forks (`carryCommit`), so it is when each of its
 * parents is, as after `merge`, which makes its own commit of the same forks.
 */
async function integrationMerged(repo: HostGit, commit: string): Promise<boolean> {
  const parents = (await repo.out(['rev-list', '--parents', '-n', '1', commit])).split(' ').slice(1);
  for (const c of parents.length > 0 ? parents : [commit]) if (!(await repo.isAncestor(c, 'HEAD'))) return false;
  return true;
}

/**
 * Remove a worktree run's worktrees and branches. Only what the run made: a worktree at
 * `<fan-out dir>/worktrees/<forkId>` and a branch `forkcache/<forkId>` for the fork ids of the
 * manifest, the integration step's (`integrationIdOf`: it holds the integrated tree, so while
 * that is not in HEAD it is work not merged, kept without `--force` as a fork's branch is), and
 * a branch only when it contains the run's recorded base. Running it again
 * removes nothing more; `dryRun` lists and changes nothing. A handful of git calls whatever
 * the number of forks: the directories go with the file system, git's records with one prune,
 * the branches in one `update-ref` transaction. A branch whose work is not in HEAD goes only
 * when `removeUnmerged` says so (`--force`, or a yes at the prompt).
 */
export async function cleanRun(
  run: RunReview,
  dryRun: boolean,
  /** Asked once with the unmerged branches: true removes them, false keeps them (listed as kept). */
  removeUnmerged: (branches: readonly CleanStep[]) => Promise<boolean> = () => Promise.resolve(true),
): Promise<CleanResult> {
  const out: CleanResult = { removed: [], kept: [] };
  if (run.isolation !== 'worktree') return out;
  const repo = await repoOfRun(run);
  const root = join(run.dir, 'worktrees');
  const fanOutId = run.manifest.fanoutId;
  const integration = integrationIdOf(fanOutId, run.repo?.name);
  const ids = new Set([...run.forks.map((f) => f.forkId), integration]);
  // a plan over several repositories: the other repositories' forks and integrations are theirs to clean
  const others = new Set([
    ...run.manifest.directives.map((_, i) => forkIdOf(fanOutId, i)),
    ...(runRepos(run) ?? []).map((name) => integrationIdOf(fanOutId, name)),
  ]);
  for (const name of existsSync(root) ? readdirSync(root).sort() : []) {
    if (ids.has(name)) out.removed.push({ kind: 'worktree', name: join(root, name) });
    else if (!(run.repo && others.has(name))) out.kept.push({ name: join(root, name), why: 'not a fork of this run' });
  }
  const ours = new Set([...ids].map(branchOf));
  const all = await repo.branches(BRANCH_PREFIX);
  const containing = run.base ? await repo.branches(BRANCH_PREFIX, { contains: run.base }) : all;
  const merged = await repo.branches(BRANCH_PREFIX, { merged: 'HEAD' });
  for (const [branch, commit] of all) {
    if (!ours.has(branch)) continue;
    if (!containing.has(branch))
      out.kept.push({ name: branch, why: `it does not contain the run's base ${run.base!.slice(0, 10)}` });
    else {
      const isMerged =
        merged.has(branch) || (branch === branchOf(integration) && (await integrationMerged(repo, commit)));
      out.removed.push({ kind: 'branch', name: branch, commit, merged: isMerged });
    }
  }
  if (dryRun) return out;
  const unmerged = out.removed.filter((s) => s.kind === 'branch' && !s.merged);
  if (unmerged.length > 0 && !(await removeUnmerged(unmerged))) {
    out.removed = out.removed.filter((s) => !unmerged.includes(s));
    for (const s of unmerged)
      out.kept.push({
        name: s.name,
        why:
          s.name === branchOf(integration)
            ? `the integrated tree, not merged into HEAD (${s.commit!.slice(0, 10)}): \`forkcache merge\` merges its forks, --force removes it`
            : `not merged into HEAD (${s.commit!.slice(0, 10)}): --force removes it`,
      });
  }
  const trees = out.removed.filter((s) => s.kind === 'worktree').map((s) => s.name);
  // a worktree on a disk of its own goes with its image (unmounted first: rm cannot remove a mount point)
  for (const tree of trees) await detachDisk(tree);
  for (const forkId of ids) rmSync(diskImageOf(join(root, forkId)), { force: true });
  await removeTrees(trees);
  for (const tree of trees) releaseStaleEntries(repo, tree);
  await repo.run(['worktree', 'prune']);
  const deletes = out.removed
    .filter((s) => s.kind === 'branch')
    .map((s) => `delete refs/heads/${s.name} ${s.commit}\n`);
  if (deletes.length > 0) await repo.run(['update-ref', '--stdin'], { input: deletes.join('') });
  return out;
}
