import { realpathSync } from 'node:fs';
import { ForkcacheError } from '../../util/errors.ts';
import { join, relative, resolve, sep } from 'node:path';
import { readManifest, recordRepoWorktrees, recordWorktreeBase } from '../../run-dir/manifest.ts';
import { HostGit } from '../../tools/git/host-git.ts';
import {
  BRANCH_PREFIX,
  closeWorktree,
  committedResult,
  openWorktree,
  type Worktree,
  type WorktreeResult,
} from '../../tools/git/worktree.ts';
import { workspaceDiskSupport } from '../../tools/git/workspace-disk.ts';
import { Permits, wholeWorktreeLimit } from '../../tools/git/worktree-budget.ts';
import { openRepos } from './repos.ts';

interface RepoBase {
  repo: HostGit;
  base: string;
  /** The folder the fork works in, inside the repository (its workspace-relative paths start there). */
  workspace: string;
}

/**
 * The worktrees of one fan-out under `isolation: 'worktree'`: the repository is found and the
 * base commit fixed once (recorded in the manifest before the first worktree exists, read back
 * on resume), then each fork's worktree is opened and closed through the hardened git runner.
 */
interface FanOutWorktreeOptions {
  readonly maxWorkspaceMb?: number | undefined;
  readonly maxWhole?: number | undefined;
  readonly repos?: readonly string[] | undefined;
}

export class FanOutWorktrees {
  readonly #workspace: string;
  readonly #dir: string;
  readonly #repos: readonly string[] | undefined;
  #ready: Promise<Map<string | undefined, RepoBase>> | undefined;
  /** Whole worktrees at once: the engine's `maxWorktrees`, else what keeps the disk under 3× the repository. */
  readonly #maxWhole: number | undefined;
  /** Per repository (one key when the plan has one). */
  readonly #whole = new Map<string | undefined, Promise<Permits>>();
  /** The permit each open whole worktree holds, by its path. */
  readonly #held = new Map<string, () => void>();

  readonly #disk: { readonly maxMb: number } | undefined;

  /**
   * `maxWorkspaceMb`: each worktree on a disk of its own that size beyond its checkout, where one
   * can be made. `maxWhole`: whole worktrees at once (the engine's `maxWorktrees`). `repos`: a
   * plan over several repositories (workspace-relative); each fork then names its own.
   */
  constructor(workspace: string, fanOutDir: string, options: FanOutWorktreeOptions = {}) {
    this.#workspace = workspace;
    this.#dir = fanOutDir;
    const { maxWorkspaceMb, maxWhole, repos } = options;
    this.#disk = maxWorkspaceMb !== undefined && 'ok' in workspaceDiskSupport() ? { maxMb: maxWorkspaceMb } : undefined;
    this.#maxWhole = maxWhole;
    this.#repos = repos;
  }

  #prepare(): Promise<Map<string | undefined, RepoBase>> {
    this.#ready ??= this.#repos ? this.#prepareRepos(this.#repos) : this.#prepareOne();
    return this.#ready;
  }

  async #prepareOne(): Promise<Map<string | undefined, RepoBase>> {
    const repo = await HostGit.open(
      this.#workspace,
      'INVALID_OPTION',
      `isolation: 'worktree' needs the workspace in a git repository with a commit; ${this.#workspace}`,
    );
    const recorded = readManifest(this.#dir).worktrees;
    const base = recorded?.base ?? (await repo.out(['rev-parse', '--verify', 'HEAD^{commit}']));
    recordWorktreeBase(this.#dir, { repo: repo.top, base });
    return new Map([[undefined, { repo, base, workspace: realpathSync(this.#workspace) }]]);
  }

  /** Every repository's base is fixed before the first worktree of any (one manifest write). */
  async #prepareRepos(names: readonly string[]): Promise<Map<string | undefined, RepoBase>> {
    const opened = await openRepos(this.#workspace, names);
    const recorded = readManifest(this.#dir).repoWorktrees ?? {};
    const bases: Record<string, { repo: string; base: string }> = {};
    for (const [name, repo] of opened)
      bases[name] = {
        repo: repo.top,
        base: recorded[name]?.base ?? (await repo.out(['rev-parse', '--verify', 'HEAD^{commit}'])),
      };
    recordRepoWorktrees(this.#dir, bases);
    return new Map(
      [...opened].map(([name, repo]) => [name, { repo, base: bases[name]!.base, workspace: realpathSync(repo.top) }]),
    );
  }

  async #of(repoName: string | undefined): Promise<RepoBase> {
    const found = (await this.#prepare()).get(this.#repos ? repoName : undefined);
    // the fan-out's plan checked every fork's repository; a resumed manifest edited by hand is not
    if (!found)
      throw new ForkcacheError('INVALID_OPTION', `repo: ${String(repoName)} is not one of the run's repos`, {
        data: { field: 'repo' },
      });
    return found;
  }

  /**
   * `file`: the fork's only file (workspace-relative), for a sparse worktree; `repoName`: its
   * repository. A whole worktree waits for a permit first (`signal` ends the wait): a run of
   * hundreds of forks holds only as many checkouts as its disk budget allows, not one per
   * running fork.
   */
  async open(
    forkId: string,
    file?: string,
    at: { repoName?: string | undefined; signal?: AbortSignal | undefined } = {},
  ): Promise<Worktree> {
    const { repoName, signal } = at;
    const { repo, base, workspace } = await this.#of(repoName);
    const sparse = file === undefined ? undefined : [relative(repo.top, resolve(workspace, file)).split(sep).join('/')];
    const o = { root: join(this.#dir, 'worktrees'), forkId, base, workspace, sparse, disk: this.#disk, signal };
    if (sparse) return openWorktree(repo, o);
    const key = this.#repos ? repoName : undefined;
    let permits = this.#whole.get(key);
    if (!permits) {
      permits = (async () => new Permits(this.#maxWhole ?? (await wholeWorktreeLimit(repo, base))))();
      this.#whole.set(key, permits);
    }
    const release = await (await permits).acquire(signal);
    try {
      const tree = await openWorktree(repo, o);
      this.#held.set(tree.path, release);
      return tree;
    } catch (err) {
      release();
      throw err;
    }
  }

  /** Give back the permit of a whole worktree (its commit removed it, or it is left for `clean`). */
  release(tree: Worktree): void {
    this.#held.get(tree.path)?.();
    this.#held.delete(tree.path);
  }

  /** A finished fork's result from its branch when its worktree is gone (it was committed). */
  async committed(forkId: string, repoName?: string): Promise<WorktreeResult | undefined> {
    const { repo, base } = await this.#of(repoName);
    return committedResult(repo, { root: join(this.#dir, 'worktrees'), forkId, base });
  }

  /** `leaveOut`: what the plan's check created (workspace-relative), kept out of the commit. */
  async close(
    tree: Worktree,
    message: string,
    repoName?: string,
    leaveOut: readonly string[] = [],
  ): Promise<WorktreeResult> {
    const { repo } = await this.#of(repoName);
    try {
      return await closeWorktree(repo, tree, message, leaveOut);
    } finally {
      this.release(tree);
    }
  }
}

/**
 * The fan-out ids that have `forkcache/<id>-fNN` branches in the workspace's repository: an
 * id is reused when its run directory is gone (ids restart with every engine), and a new run
 * must never pick up an old run's branches. Empty when the workspace is no repository (the
 * forks then fail with the reason).
 */
export async function fanOutIdsWithBranches(workspace: string, repos?: readonly string[]): Promise<Set<string>> {
  const ids = new Set<string>();
  for (const dir of repos ? repos.map((name) => resolve(workspace, name)) : [workspace]) {
    try {
      const repo = await HostGit.open(dir, 'INVALID_OPTION');
      const refs = await repo.out(['for-each-ref', '--format=%(refname:lstrip=2)', `refs/heads/${BRANCH_PREFIX}`]);
      for (const name of refs.split('\n')) {
        const id = /^forkcache\/(.+)-f\d+$/.exec(name)?.[1];
        if (id !== undefined) ids.add(id);
      }
    } catch {
      // not a repository: its forks fail with the reason
    }
  }
  return ids;
}
