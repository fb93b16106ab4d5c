import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { RunReview, ForkReview } from '../review/run-forks.ts';
import { carryCommit, mergePass } from '../review/merge-forks.ts';
import { createToolExecutor } from '../../tools/executor.ts';
import type { CheckResult } from '../../tools/check-run.ts';
import type { HostGit } from '../../tools/host-git.ts';
import { branchOf, discardWorktree, openWorktree, retireWorktree, type Worktree } from '../../tools/worktree.ts';
import { toolFlagsOf } from '../../tools/tool-flags.ts';

/**
 * Where the check's HOME is, inside the integration worktree: bash's sandbox keeps only the
 * workspace writable, and a compiler's cache there (Go's `~/.cache/go-build`) lasts from one
 * check to the next instead of being rebuilt each time. A dot folder: `./...` patterns and
 * most tools skip it, and it is never committed (commits are made from merged trees).
 */
const CHECK_HOME = '.forkcache-home';

/** What one merge of a set of forks gave: the tree, and the forks that could not be merged. */
export interface TreeMerge {
  tree: string;
  merged: ForkReview[];
  conflicts: Array<{ fork: ForkReview; files: string[] }>;
  refused: Array<{ fork: ForkReview; paths: string[] }>;
}

/**
 * The integration step's own worktree (never the user's checkout): a branch
 * `forkcache/<fanOutId>-integration` at the repository's HEAD, whose files are replaced by
 * each merged tree in turn, and where the repository-wide check runs in bash's sandbox with
 * the run's sandbox settings, as the per-fork checks do.
 */
export class IntegrationTree {
  readonly repo: HostGit;
  readonly from: string;
  readonly branch: string;
  readonly #tree: Worktree;
  readonly #run: RunReview;
  #current: string;

  private constructor(repo: HostGit, run: RunReview, from: string, tree: Worktree) {
    this.repo = repo;
    this.#run = run;
    this.from = from;
    this.#tree = tree;
    this.branch = tree.branch;
    this.#current = from;
  }

  /** A fresh integration worktree of `run` at `from` (an earlier integration's is replaced). */
  static async open(repo: HostGit, run: RunReview, from: string): Promise<IntegrationTree> {
    const id = `${run.manifest.fanoutId}${run.repo ? `-${run.repo.name}` : ''}-integration`;
    const root = join(run.dir, 'worktrees');
    if (existsSync(join(root, id))) await discardWorktree(repo, join(root, id));
    // the branch is this step's alone: one left by an earlier integration starts over at `from`
    await repo.run(['branch', '-D', branchOf(id)], { ok: [1] });
    const tree = await openWorktree(repo, { root, forkId: id, base: from, workspace: repo.top });
    return new IntegrationTree(repo, run, from, tree);
  }

  get path(): string {
    return this.#tree.path;
  }

  /** Merge `forks` (in plan order) onto `from` in git's object store, and put the result in the worktree. */
  async merge(run: RunReview, forks: readonly ForkReview[]): Promise<TreeMerge> {
    const ids = new Set(forks.map((f) => f.forkId));
    const pass = await mergePass(this.repo, run, this.from, new Set(), ids);
    await this.#show(pass.tree);
    return { tree: pass.tree, merged: pass.merged, conflicts: pass.conflicts, refused: pass.refused };
  }

  /** The worktree's files become `tree` (tracked files only: what a check built is left). */
  async #show(tree: string): Promise<void> {
    if (tree === this.#current) return;
    const git = await this.repo.worktree(this.#tree.path, this.#tree.link);
    await git.run(['read-tree', '-u', '--reset', tree]);
    this.#current = tree;
  }

  /** Run `command` at the top of the worktree, in bash's sandbox with the run's settings. */
  async check(command: string, timeoutMs: number): Promise<CheckResult> {
    const engine = this.#run.manifest.engine;
    const home = join(this.#tree.path, CHECK_HOME);
    mkdirSync(home, { recursive: true });
    const executor = createToolExecutor({
      workspace: this.#tree.path,
      allow: [],
      sandbox: engine.sandbox,
      limits: engine.toolLimits,
      ...toolFlagsOf(engine),
      bashEnv: {
        ...Object.fromEntries(['PATH', 'LANG'].flatMap((k) => (process.env[k] ? [[k, process.env[k]]] : []))),
        HOME: home,
      },
    });
    return executor.check(command, { timeoutMs });
  }

  /** Point the integration branch at `forks` merged onto `from` (one commit, as `merge` makes). */
  async commit(merge: TreeMerge): Promise<string> {
    const commit = await carryCommit(this.repo, this.#run, this.from, {
      tree: merge.tree,
      merged: merge.merged,
      skipped: [],
      conflicts: [],
      refused: [],
    });
    await this.repo.run(['update-ref', `refs/heads/${this.branch}`, commit]);
    return commit;
  }

  /** Remove the worktree; the branch stays (it holds the integrated tree). */
  async close(): Promise<void> {
    await retireWorktree(this.repo, this.#tree);
  }
}
