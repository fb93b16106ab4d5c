import { existsSync, lstatSync, mkdirSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import type { RunReview, ForkReview } from '../review/run-forks.ts';
import { carryCommit, mergePass } from '../review/merge-forks.ts';
import { createToolExecutor } from '../../core/tools/executor.ts';
import type { CheckResult } from '../../core/tools/checks/run.ts';
import type { HostGit } from '../../core/tools/git/host-git.ts';
import {
  branchOf,
  discardWorktree,
  openWorktree,
  retireWorktree,
  type Worktree,
} from '../../core/tools/git/worktree.ts';
import { toolFlagsOf } from '../../core/tools/tool-flags.ts';
import { DEFAULT_CHECK_DEPENDENCIES } from '../integration-settings.ts';
import { integrationIdOf } from '../../core/run-dir/integration.ts';

/**
 * Where the check's HOME is, inside the integration worktree: bash's sandbox keeps only the
 * workspace writable, and a compiler's cache there (Go's `~/.cache/go-build`) lasts from one
 * check to the next instead of being rebuilt each time. A dot folder: `./...` patterns and
 * most tools skip it, and it is never committed (commits are made from merged trees).
 */
const CHECK_HOME = '.forkcache-home';

/**
 * The checkout's dependency folders the check sees, by name: each a directory at the
 * repository's top; without names, the default ones where git ignores them (a folder of that
 * name the project tracks, or merely leaves untracked, is not a dependency folder).
 */
async function dependencyFolders(repo: HostGit, names: readonly string[] | undefined): Promise<string[]> {
  const found: string[] = [];
  for (const name of names ?? DEFAULT_CHECK_DEPENDENCIES) {
    let isDir = false;
    try {
      isDir = statSync(join(repo.top, name)).isDirectory();
    } catch {
      // not there: nothing to show
    }
    if (!isDir) continue;
    if (names === undefined && (await repo.run(['check-ignore', '-q', '--', name], { ok: [1] })).code !== 0) continue;
    found.push(name);
  }
  return found;
}

const exists = (path: string): boolean => {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
};

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
  readonly #dependencies: readonly string[];
  #current: string;

  private constructor(repo: HostGit, run: RunReview, from: string, tree: Worktree, dependencies: readonly string[]) {
    this.repo = repo;
    this.#dependencies = dependencies;
    this.#run = run;
    this.from = from;
    this.#tree = tree;
    this.branch = tree.branch;
    this.#current = from;
  }

  /**
   * A fresh integration worktree of `run` at `from` (an earlier integration's is replaced);
   * `dependencies`: the plan's `checkDependencies` (undefined: the default ones).
   */
  static async open(
    repo: HostGit,
    run: RunReview,
    from: string,
    dependencies?: readonly string[],
  ): Promise<IntegrationTree> {
    const id = integrationIdOf(run.manifest.fanoutId, run.repo?.name);
    const root = join(run.dir, 'worktrees');
    if (existsSync(join(root, id))) await discardWorktree(repo, join(root, id));
    // the branch is this step's alone: one left by an earlier integration starts over at `from`
    await repo.run(['branch', '-D', branchOf(id)], { ok: [1] });
    const tree = await openWorktree(repo, { root, forkId: id, base: from, workspace: repo.top });
    return new IntegrationTree(repo, run, from, tree, await dependencyFolders(repo, dependencies));
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

  /**
   * Run `command` at the top of the worktree, in bash's sandbox with the run's settings, the
   * checkout's dependency folders linked in for it and shown read-only.
   */
  async check(command: string, timeoutMs: number): Promise<CheckResult> {
    const engine = this.#run.manifest.engine;
    const home = join(this.#tree.path, CHECK_HOME);
    mkdirSync(home, { recursive: true });
    const linked = await this.#link();
    try {
      const executor = createToolExecutor({
        workspace: this.#tree.path,
        allow: [],
        sandbox: engine.sandbox,
        limits: engine.toolLimits,
        ...toolFlagsOf(engine),
        readOnly: linked.map((name) => join(this.repo.top, name)),
        bashEnv: {
          ...Object.fromEntries(['PATH', 'LANG'].flatMap((k) => (process.env[k] ? [[k, process.env[k]]] : []))),
          HOME: home,
        },
      });
      return await executor.check(command, { timeoutMs });
    } finally {
      // what is at a linked name now is the link or the check's own output, never tracked: the
      // next `read-tree -u --reset` must not find it in its way (rm removes a link, not its target)
      for (const name of linked) rmSync(join(this.#tree.path, name), { recursive: true, force: true });
    }
  }

  /**
   * Link each dependency folder into the worktree, `<worktree>/<name> -> <top>/<name>` (the
   * same absolute path the sandbox shows it at, so a venv's own paths hold), where the merged
   * tree has nothing of that name: a fork that commits its own `node_modules` gets its own,
   * never the user's linked over it. The names linked.
   */
  async #link(): Promise<string[]> {
    if (this.#dependencies.length === 0) return [];
    const tracked = new Set(
      (await this.repo.out(['ls-tree', '--name-only', this.#current, '--', ...this.#dependencies]))
        .split('\n')
        .filter((l) => l !== ''),
    );
    const linked: string[] = [];
    for (const name of this.#dependencies) {
      const at = join(this.#tree.path, name);
      if (tracked.has(name) || exists(at)) continue;
      symlinkSync(join(this.repo.top, name), at);
      linked.push(name);
    }
    return linked;
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
