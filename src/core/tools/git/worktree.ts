import { existsSync, lstatSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { ForkcacheError } from '../../util/errors.ts';
import { execFileText, pathOnlyEnv } from '../../util/exec-file.ts';
import type { HostGit, WorktreeGit } from './host-git.ts';
import { withPathLock } from '../path-lock.ts';
import type { WorktreeLink } from './worktree-link.ts';
import {
  attachDisk,
  checkoutSizeOf,
  detachDisk,
  diskImageOf,
  diskLayout,
  isMountPoint,
  makeDisk,
} from './workspace-disk.ts';

/** What a fork did in its own worktree: where, on which branch, and the change as a diff stat. */
export interface WorktreeResult {
  path: string;
  branch: string;
  base: string;
  /** The commit holding the fork's changes; null when it changed nothing. */
  commit: string | null;
  diffStat: string;
  /**
   * What the plan's check created in the worktree and the commit left out (paths relative to
   * the repository, `dir/` for a directory): build outputs and caches are not the fork's work.
   * Absent: nothing was left out.
   */
  leftOut?: string[] | undefined;
}

export interface Worktree {
  path: string;
  branch: string;
  base: string;
  /** The fork's workspace inside the worktree (the same place relative to the repository). */
  workspace: string;
  /** The git dir forkcache linked it to: every later git command checks the worktree still links there. */
  link: WorktreeLink;
}

/** Every branch forkcache makes is `forkcache/<forkId>`: `clean` removes no other. */
export const BRANCH_PREFIX = 'forkcache/';

export function branchOf(forkId: string): string {
  return `${BRANCH_PREFIX}${forkId}`;
}

const chains = new Map<string, Promise<unknown>>();

/**
 * Run `work` alone among the worktree changes of one repository: concurrent `git worktree add`
 * read each other's half-written `worktrees/<name>` (`failed to read …/commondir`). One chain
 * per repository in this process, and a file lock for other processes (a second run or resume
 * on the same repository).
 */
function underRepoLock<T>(repo: HostGit, work: () => Promise<T>): Promise<T> {
  const key = repo.commonDir;
  const previous = chains.get(key) ?? Promise.resolve();
  const next = previous.then(
    () => withPathLock(join(key, 'worktrees'), undefined, work),
    () => withPathLock(join(key, 'worktrees'), undefined, work),
  );
  const settled = next.catch(() => undefined);
  chains.set(key, settled);
  void settled.then(() => chains.get(key) === settled && chains.delete(key));
  return next;
}

/**
 * Unlock git's records of the worktree that was at `path`, so `git worktree prune` removes
 * them once the directory is gone (a `locked` one, left by a `worktree add` killed half-way,
 * is never pruned).
 */
export function releaseStaleEntries(repo: HostGit, path: string): void {
  const dir = join(repo.commonDir, 'worktrees');
  if (!existsSync(dir)) return;
  for (const name of readdirSync(dir)) {
    try {
      if (readFileSync(join(dir, name, 'gitdir'), 'utf8').trim() === join(path, '.git'))
        rmSync(join(dir, name, 'locked'), { force: true });
    } catch {
      // an entry without a back-pointer is git's to prune
    }
  }
}

/**
 * Remove directories (worktrees: thousands of files each) with `rm -rf`, two to three times
 * faster than `fs.rmSync` here; `rmSync` where there is no `rm`. Symlinks inside are removed,
 * never followed, either way.
 */
export async function removeTrees(paths: readonly string[]): Promise<void> {
  if (paths.length === 0) return;
  if ((await execFileText('rm', ['-rf', '--', ...paths], { env: pathOnlyEnv() })).code !== 0)
    for (const path of paths) rmSync(path, { recursive: true, force: true });
}

/**
 * Remove a worktree of forkcache's and whatever a failed creation left of it: the directory,
 * then git's record of it (even a `locked` "initializing" one) with the other prunable ones.
 */
export async function discardWorktree(repo: HostGit, path: string): Promise<void> {
  // by the file system, not `git worktree remove`: git would read the (perhaps tampered) `.git`
  await detachDisk(path);
  rmSync(path, { recursive: true, force: true });
  releaseStaleEntries(repo, path);
  await repo.run(['worktree', 'prune']);
}

interface OpenWorktree {
  /** Where the fan-out's worktrees live (`<fan-out dir>/worktrees`). */
  root: string;
  forkId: string;
  /** The run's base commit (recorded in the manifest): a new worktree starts there, never at HEAD. */
  base: string;
  /** The fork's workspace, as a path inside the repository. */
  workspace: string;
  /**
   * Sparse: only these files (paths relative to the repository) are written into the new
   * worktree; every other file stays in its index, marked skip-worktree, so the commit keeps
   * it as it was. Undefined: the whole tree.
   */
  sparse?: readonly string[] | undefined;
  /**
   * A file system of its own for the worktree, holding the checkout and `maxMb` MiB more
   * (workspace-disk.ts): undefined where none can be made (the run says why).
   */
  disk?: { readonly maxMb: number } | undefined;
  /**
   * The fork's cancel. Worktree creation is one at a time per repository: after Ctrl-C the
   * forks queued for it must not each run `git worktree add` (and make a disk) in turn before
   * the run can end.
   */
  signal?: AbortSignal | undefined;
}

function worktreeOf(repo: HostGit, o: OpenWorktree, link: WorktreeLink): Worktree {
  const branch = branchOf(o.forkId);
  return { path: link.path, branch, base: o.base, workspace: join(link.path, relative(repo.top, o.workspace)), link };
}

/** The existing worktree of a resumed fork, if it is whole and on its branch. */
async function reusable(repo: HostGit, o: OpenWorktree, path: string): Promise<WorktreeLink | undefined> {
  try {
    const tree = await repo.worktree(path);
    if (existsSync(join(tree.link.gitDir, 'locked'))) return undefined; // `worktree add` never finished
    const head = await tree.out(['symbolic-ref', '--quiet', 'HEAD']);
    return head === `refs/heads/${branchOf(o.forkId)}` ? tree.link : undefined;
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (code === 'GIT_WORKTREE_TAMPERED' || code === 'GIT_FAILED') return undefined;
    throw err;
  }
}

async function add(repo: HostGit, o: OpenWorktree, path: string): Promise<void> {
  const branch = branchOf(o.forkId);
  await repo.run(['worktree', 'prune']);
  const tip = await repo.commitOf(`refs/heads/${branch}`);
  if (tip && !(await repo.isAncestor(o.base, tip)))
    throw new ForkcacheError(
      'GIT_FAILED',
      `branch ${branch} exists at ${tip.slice(0, 12)}, which does not contain the run's base ${o.base.slice(0, 12)}: it is not this run's; rename or delete it`,
      { data: { branch } },
    );
  // a branch without a worktree (a creation that failed half-way, a removed directory) keeps its commits
  const args = tip ? [path, branch] : ['-b', branch, path, o.base];
  try {
    if (o.disk) {
      const listed = await repo.run(['ls-tree', '-r', '-l', '-z', tip ?? o.base, '--', ...(o.sparse ?? [])]);
      await makeDisk(diskImageOf(path), path, diskLayout(checkoutSizeOf(listed.stdout), o.disk.maxMb));
    }
    await repo.run(['worktree', 'add', '--quiet', ...(o.sparse ? ['--no-checkout'] : []), ...args]);
    if (o.sparse) await checkOutOnly(await repo.worktree(path), o.sparse);
  } catch (err) {
    await discardWorktree(repo, path);
    if (!tip && (await repo.commitOf(`refs/heads/${branch}`)) === o.base) await repo.run(['branch', '-D', branch]);
    throw err;
  }
}

/**
 * Fill a `--no-checkout` worktree with `files` only: the index is the branch's whole tree, every
 * other entry marked skip-worktree (git then neither writes it nor takes its absence for a
 * deletion). No sparse-checkout configuration is written: the user's repository config stays
 * as it was (`git sparse-checkout` would turn on `extensions.worktreeConfig` there).
 */
async function checkOutOnly(git: WorktreeGit, files: readonly string[]): Promise<void> {
  await git.run(['read-tree', 'HEAD']);
  const wanted = new Set(files);
  const all = (await git.run(['ls-files', '-z'])).stdout.split('\0').filter(Boolean);
  const skipped = all.filter((f) => !wanted.has(f));
  if (skipped.length > 0)
    await git.run(['update-index', '-z', '--skip-worktree', '--stdin'], { input: `${skipped.join('\0')}\0` });
  const present = all.filter((f) => wanted.has(f));
  if (present.length > 0) await git.run(['checkout-index', '-z', '--stdin'], { input: `${present.join('\0')}\0` });
}

/**
 * A file the fork wrote where a skip-worktree entry is (a file of the tree it was not given)
 * would be left out of `git add --all` silently: such entries are made ordinary again first.
 */
async function unskipWritten(git: WorktreeGit): Promise<void> {
  const entries = (await git.run(['ls-files', '-v', '-z'])).stdout.split('\0').filter(Boolean);
  const written = entries
    .filter((e) => e.startsWith('S '))
    .map((e) => e.slice(2))
    .filter((f) => {
      try {
        lstatSync(join(git.link.path, f));
        return true;
      } catch {
        return false;
      }
    });
  if (written.length > 0)
    await git.run(['update-index', '-z', '--no-skip-worktree', '--stdin'], { input: `${written.join('\0')}\0` });
}

/**
 * The fork's worktree on branch `forkcache/<forkId>`: reused when a resumed fork has one,
 * else created from the run's base (or from the branch, when one is left), under the
 * repository's lock. A failed creation leaves nothing behind and is tried once more.
 */
export function openWorktree(repo: HostGit, o: OpenWorktree): Promise<Worktree> {
  const path = join(o.root, o.forkId);
  return underRepoLock(repo, async () => {
    o.signal?.throwIfAborted();
    if (existsSync(path)) {
      // a resumed fork's disk, unmounted by a reboot: its files are on the image
      if (o.disk && !isMountPoint(path) && existsSync(diskImageOf(path)))
        await attachDisk(diskImageOf(path), path).catch(() => undefined);
      const link = await reusable(repo, o, path);
      if (link) return worktreeOf(repo, o, link);
      await discardWorktree(repo, path);
    }
    await add(repo, o, path).catch(() => add(repo, o, path));
    return worktreeOf(repo, o, (await repo.worktree(path)).link);
  });
}

/**
 * Commit what the fork changed on its branch and describe it. Plumbing only (add, write-tree,
 * commit-tree, update-ref): no hook, no editor, no signing, and the link checked before each.
 * `leaveOut`: what the plan's check created (workspace-relative, `dir/` for a directory,
 * src/core/tools/checks/outputs.ts), never added: a tracked path among them keeps its base content.
 */
export async function closeWorktree(
  repo: HostGit,
  tree: Worktree,
  message: string,
  leaveOut: readonly string[] = [],
): Promise<WorktreeResult> {
  const git = await repo.worktree(tree.path, tree.link);
  await unskipWritten(git);
  const inRepo = relative(tree.path, tree.workspace).split(sep).join('/');
  const leftOut = leaveOut
    .filter((p) => existsSync(join(tree.workspace, p)))
    .map((p) => (inRepo === '' ? p : `${inRepo}/${p}`));
  // what git ignores is never added: excluding it as well makes `git add` fail ("The following
  // paths are ignored…", `__pycache__/` of a py_compile check under a `.gitignore` that lists it)
  const ignored =
    leftOut.length === 0
      ? new Set<string>()
      : new Set(
          (await git.run(['check-ignore', '-z', '--stdin'], { input: `${leftOut.join('\0')}\0`, ok: [1] })).stdout
            .split('\0')
            .filter(Boolean),
        );
  // literal pathspecs from stdin: a name with `*` or `:` is itself, and thousands fit
  const specs = [':(top)', ...leftOut.filter((p) => !ignored.has(p)).map((p) => `:(top,literal,exclude)${p}`)];
  await git.run(['add', '--all', '--pathspec-from-file=-', '--pathspec-file-nul'], { input: `${specs.join('\0')}\0` });
  const written = await git.out(['write-tree']);
  const head = await git.out(['rev-parse', '--verify', 'HEAD^{commit}']);
  let commit = head;
  if (written !== (await git.out(['rev-parse', `${head}^{tree}`]))) {
    commit = await git.out(['commit-tree', written, '-p', head, '-m', message]);
    await git.run(['update-ref', `refs/heads/${tree.branch}`, commit, head]);
  }
  const diffStat = await git.out(['diff', '--stat', '--no-ext-diff', '--no-textconv', tree.base, commit]);
  await retireWorktree(repo, tree);
  return {
    path: tree.path,
    branch: tree.branch,
    base: tree.base,
    commit: commit === tree.base ? null : commit,
    diffStat,
    ...(leftOut.length > 0 ? { leftOut } : {}),
  };
}

/**
 * A fork whose worktree is gone while its branch is there was committed already (a worktree is
 * removed only after its commit): its result from the branch, with no worktree made again.
 * Undefined when the worktree still exists or the branch does not (the fork is not done).
 */
export async function committedResult(
  repo: HostGit,
  o: Omit<OpenWorktree, 'workspace' | 'sparse'>,
): Promise<WorktreeResult | undefined> {
  const path = join(o.root, o.forkId);
  const branch = branchOf(o.forkId);
  if (existsSync(path)) return undefined;
  const tip = await repo.commitOf(`refs/heads/${branch}`);
  if (!tip || !(await repo.isAncestor(o.base, tip))) return undefined;
  const diffStat = await repo.out(['diff', '--stat', '--no-ext-diff', '--no-textconv', o.base, tip]);
  return { path, branch, base: o.base, commit: tip === o.base ? null : tip, diffStat };
}

/**
 * Remove a committed worktree: its branch holds the work, and a run of hundreds of forks must
 * not hold hundreds of checkouts (issue 34: 1.49 GB for a 5 MB repository). git's record goes
 * first, under the repository's lock (a concurrent `worktree add` prunes), so a directory left
 * by a crash after it is never taken for a whole worktree; the directory goes by `rm -rf`.
 */
export async function retireWorktree(repo: HostGit, tree: Pick<Worktree, 'path' | 'link'>): Promise<void> {
  await underRepoLock(repo, () => {
    rmSync(tree.link.gitDir, { recursive: true, force: true });
    return Promise.resolve();
  });
  await detachDisk(tree.path); // a disk of its own goes whole, with no file-by-file removal
  await removeTrees([tree.path]);
}
