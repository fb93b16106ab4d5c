import { realpathSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import { readManifest, recordWorktreeBase } from '../../run-dir/manifest.ts';
import { HostGit } from '../../tools/host-git.ts';
import {
  BRANCH_PREFIX,
  closeWorktree,
  committedResult,
  openWorktree,
  type Worktree,
  type WorktreeResult,
} from '../../tools/worktree.ts';

/**
 * The worktrees of one fan-out under `isolation: 'worktree'`: the repository is found and the
 * base commit fixed once (recorded in the manifest before the first worktree exists, read back
 * on resume), then each fork's worktree is opened and closed through the hardened git runner.
 */
export class FanOutWorktrees {
  readonly #workspace: string;
  readonly #dir: string;
  #ready: Promise<{ repo: HostGit; base: string }> | undefined;

  constructor(workspace: string, fanOutDir: string) {
    this.#workspace = workspace;
    this.#dir = fanOutDir;
  }

  #prepare(): Promise<{ repo: HostGit; base: string }> {
    this.#ready ??= (async () => {
      const repo = await HostGit.open(
        this.#workspace,
        'INVALID_ARGUMENT',
        `isolation: 'worktree' needs the workspace in a git repository with a commit; ${this.#workspace}`,
      );
      const recorded = readManifest(this.#dir).worktrees;
      const base = recorded?.base ?? (await repo.out(['rev-parse', '--verify', 'HEAD^{commit}']));
      recordWorktreeBase(this.#dir, { repo: repo.top, base });
      return { repo, base };
    })();
    return this.#ready;
  }

  /** `file`: the fork's only file (workspace-relative), for a sparse worktree. */
  async open(forkId: string, file?: string): Promise<Worktree> {
    const { repo, base } = await this.#prepare();
    const workspace = realpathSync(this.#workspace);
    const sparse = file === undefined ? undefined : [relative(repo.top, resolve(workspace, file)).split(sep).join('/')];
    return openWorktree(repo, { root: join(this.#dir, 'worktrees'), forkId, base, workspace, sparse });
  }

  /** A finished fork's result from its branch when its worktree is gone (it was committed). */
  async committed(forkId: string): Promise<WorktreeResult | undefined> {
    const { repo, base } = await this.#prepare();
    return committedResult(repo, { root: join(this.#dir, 'worktrees'), forkId, base });
  }

  async close(tree: Worktree, message: string): Promise<WorktreeResult> {
    const { repo } = await this.#prepare();
    return closeWorktree(repo, tree, message);
  }
}

/**
 * The fan-out ids that have `forkcache/<id>-fNN` branches in the workspace's repository: an
 * id is reused when its run directory is gone (ids restart with every engine), and a new run
 * must never pick up an old run's branches. Empty when the workspace is no repository (the
 * forks then fail with the reason).
 */
export async function fanOutIdsWithBranches(workspace: string): Promise<Set<string>> {
  try {
    const repo = await HostGit.open(workspace, 'INVALID_ARGUMENT');
    const refs = await repo.out(['for-each-ref', '--format=%(refname:lstrip=2)', `refs/heads/${BRANCH_PREFIX}`]);
    const ids = refs.split('\n').flatMap((name) => /^forkcache\/(.+)-f\d+$/.exec(name)?.[1] ?? []);
    return new Set(ids);
  } catch {
    return new Set();
  }
}
