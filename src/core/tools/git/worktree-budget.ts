import { lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ForkcacheError } from '../../util/errors.ts';
import type { HostGit } from './host-git.ts';

/** The block a file system gives the smallest file (what `du` counts, not the file's length). */
const BLOCK = 4096;

/** Bytes a checkout of `commit` takes on disk: every file rounded up to whole blocks, a block per directory. */
async function checkoutBytes(repo: HostGit, commit: string): Promise<number> {
  const listing = await repo.out(['ls-tree', '-r', '-l', '-z', '--full-tree', commit]);
  let bytes = 0;
  const dirs = new Set<string>();
  for (const entry of listing.split('\0')) {
    const tab = entry.indexOf('\t');
    if (tab < 0) continue;
    const size = Number(entry.slice(0, tab).trim().split(/\s+/)[3]);
    bytes += Number.isFinite(size) ? Math.ceil(size / BLOCK) * BLOCK : 0;
    const path = entry.slice(tab + 1);
    for (let i = path.indexOf('/'); i >= 0; i = path.indexOf('/', i + 1)) dirs.add(path.slice(0, i));
  }
  return bytes + (dirs.size + 1) * BLOCK;
}

/** Bytes allocated under `dir` (as `du`), symbolic links not followed. */
function allocatedBytes(dir: string): number {
  let bytes = 0;
  const stack = [dir];
  while (stack.length > 0) {
    const at = stack.pop()!;
    let names: string[];
    try {
      names = readdirSync(at);
    } catch {
      continue;
    }
    for (const name of names) {
      try {
        const stat = lstatSync(join(at, name));
        bytes += stat.blocks * 512;
        if (stat.isDirectory()) stack.push(join(at, name));
      } catch {
        // removed while counted (git's own temporary files): it takes nothing now
      }
    }
  }
  return bytes;
}

/**
 * How many whole (not sparse) worktrees may exist at once so that they take at most twice the
 * repository (its checkout and its git dir) beside it: a run's peak disk then stays under three
 * times the repository whatever the number of forks (issue 34: 16 whole worktrees of rxjs at
 * once were 9.5× its 22 MB). Never fewer than one.
 */
export async function wholeWorktreeLimit(repo: HostGit, base: string): Promise<number> {
  return (await wholeWorktreeBudget(repo, base)).limit;
}

/** The limit and what it was computed from (the repository's bytes: its checkout and git dir). */
export async function wholeWorktreeBudget(
  repo: HostGit,
  base: string,
): Promise<{ limit: number; repositoryBytes: number }> {
  const checkout = await checkoutBytes(repo, base);
  const repositoryBytes = checkout + allocatedBytes(repo.commonDir);
  return { limit: Math.max(1, Math.floor((2 * repositoryBytes) / checkout)), repositoryBytes };
}

/** A count of permits, taken in order of asking; a wait ends when its signal aborts. */
export class Permits {
  #free: number;
  readonly #waiting: { grant: () => void }[] = [];

  constructor(count: number) {
    this.#free = count;
  }

  /** Resolves with the function that gives the permit back (once; later calls do nothing). */
  acquire(signal?: AbortSignal): Promise<() => void> {
    return new Promise((resolve, reject) => {
      let released = false;
      const release = (): void => {
        if (released) return;
        released = true;
        const next = this.#waiting.shift();
        if (next) next.grant();
        else this.#free++;
      };
      if (signal?.aborted) return reject(aborted(signal));
      if (this.#free > 0) {
        this.#free--;
        return resolve(release);
      }
      const waiter = {
        grant: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve(release);
        },
      };
      const onAbort = (): void => {
        const i = this.#waiting.indexOf(waiter);
        if (i >= 0) this.#waiting.splice(i, 1);
        reject(aborted(signal!));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiting.push(waiter);
    });
  }
}

const aborted = (signal: AbortSignal): Error =>
  signal.reason instanceof Error ? signal.reason : new ForkcacheError('FORK_CANCELLED', 'fork cancelled');
