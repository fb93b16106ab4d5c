import { realpathSync } from 'node:fs';
import { join } from 'node:path';
import { readManifest, recordWorktreeBase } from '../run-dir/manifest.ts';
import { HostGit } from '../tools/host-git.ts';
import { closeWorktree, openWorktree, type Worktree, type WorktreeResult } from '../tools/worktree.ts';

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

  async open(forkId: string): Promise<Worktree> {
    const { repo, base } = await this.#prepare();
    const workspace = realpathSync(this.#workspace);
    return openWorktree(repo, { root: join(this.#dir, 'worktrees'), forkId, base, workspace });
  }

  async close(tree: Worktree, message: string): Promise<WorktreeResult> {
    const { repo } = await this.#prepare();
    return closeWorktree(repo, tree, message);
  }
}
