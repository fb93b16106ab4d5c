import { constants } from 'node:fs';
import { mkdir, open, readlink, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { PathScope } from './jail.ts';
import { fromFsError, toolFailure } from '../result.ts';

/*
 * An openat-style walk for a runtime without openat: a directory is opened once (O_DIRECTORY,
 * O_NOFOLLOW), checked to be inside the workspace through its open fd, and every later step
 * names its entries as `/proc/self/fd/N/name`, which the kernel resolves through that exact open
 * directory, whatever a concurrent process does to the path leading to it meanwhile (issue 15,
 * case 5). Where there is no /proc (not Linux) the plain path is used: the path-level checks
 * of the jail remain, the race does not close.
 */

const PINNED = process.platform === 'linux';

/** Where an open file or directory really is (`/proc/self/fd/N`), or undefined where that cannot be known. */
async function realPathOfFd(handle: FileHandle): Promise<string | undefined> {
  if (!PINNED) return undefined;
  try {
    return await readlink(`/proc/self/fd/${handle.fd}`);
  } catch {
    return undefined;
  }
}

/** The error for an open fd that `scope` refuses (`why`: its refusal): a swap raced the path check. */
function escapedWhileOpening(display: string, why = 'is outside the workspace'): Error {
  return why === 'is outside the workspace'
    ? toolFailure(
        'TOOL_PATH_ESCAPE',
        `${display} resolved outside the workspace while it was being opened (a directory was replaced by a symbolic link); nothing was read or written`,
      )
    : toolFailure(
        'TOOL_PATH_PROTECTED',
        `${display} ${why} (a directory was replaced by a symbolic link); nothing was read or written`,
      );
}

/** Throw when the open `handle` lies where `scope` refuses; where that cannot be known, nothing. */
export async function assertFdAllowed(handle: FileHandle, scope: PathScope, display: string): Promise<void> {
  const real = await realPathOfFd(handle);
  const why = real === undefined ? undefined : scope.refusal(real);
  if (why !== undefined) throw escapedWhileOpening(display, why);
}

/** An open directory and how to name its entries without going back through its path. */
interface DirHandle {
  readonly handle: FileHandle;
  /** The directory itself, for `readdir`: through the open fd, never through its path again. */
  readonly self: string;
  /** `name` inside this very directory. */
  entry(name: string): string;
  close(): Promise<void>;
}

const DIR_FLAGS = constants.O_RDONLY | (constants.O_DIRECTORY ?? 0) | (constants.O_NOFOLLOW ?? 0);

async function openDir(at: string, fallback: string, scope: PathScope, display: string): Promise<DirHandle> {
  let handle: FileHandle;
  try {
    handle = await open(at, DIR_FLAGS);
  } catch (err) {
    if ((err as { code?: unknown }).code === 'ELOOP')
      throw toolFailure(
        'TOOL_PATH_ESCAPE',
        `${display} goes through a symbolic link that appeared after the path was checked`,
      );
    throw fromFsError(err, display);
  }
  const real = await realPathOfFd(handle);
  const why = real === undefined ? undefined : scope.refusal(real);
  if (why !== undefined) {
    await handle.close();
    throw escapedWhileOpening(display, why);
  }
  const base = real ?? fallback;
  return {
    handle,
    self: PINNED ? `/proc/self/fd/${handle.fd}` : base,
    entry: (name) => (PINNED ? `/proc/self/fd/${handle.fd}/${name}` : path.join(base, name)),
    close: () => handle.close(),
  };
}

/** Open the existing directory `dir` (a jailed path), checked by its fd against `scope`. */
export function openDirInside(dir: string, scope: PathScope, display: string): Promise<DirHandle> {
  return openDir(dir, dir, scope, display);
}

/**
 * Open `dir` below `root`, creating missing components one at a time, each through its open
 * parent: a directory is never created through a symbolic link, wherever one appears.
 */
export async function makeDirInside(dir: string, scope: PathScope, display: string): Promise<DirHandle> {
  const root = scope.root;
  let current = await openDir(root, root, scope, display);
  let fallback = root;
  try {
    for (const part of path
      .relative(root, dir)
      .split(path.sep)
      .filter((p) => p !== '')) {
      fallback = path.join(fallback, part);
      await mkdir(current.entry(part)).catch((err: unknown) => {
        if ((err as { code?: unknown }).code !== 'EEXIST') throw fromFsError(err, display);
      });
      const next = await openDir(current.entry(part), fallback, scope, display);
      await current.close();
      current = next;
    }
    return current;
  } catch (err) {
    await current.close();
    throw err;
  }
}
