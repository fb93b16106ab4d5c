import { constants } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { open, rename, unlink, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { BINARY_SNIFF_BYTES } from '../limits.ts';
import { assertFdAllowed, makeDirInside, openDirInside } from './dir-handle.ts';
import type { PathScope } from './jail.ts';
import { fromFsError, toolFailure } from '../result.ts';

// The jail resolved every symlink already; O_NOFOLLOW makes a symlink swapped in since then an
// error (ELOOP) instead of a way out. O_NONBLOCK keeps a FIFO from blocking the open forever
// (the stat below then refuses it); it changes nothing for regular files. Windows has neither
// flag: there they are 0, a plain open.
const OPEN_GUARDS = (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

/** An open regular file and its size. Close it with `handle.close()`. */
interface OpenFile {
  readonly handle: FileHandle;
  readonly size: number;
  /** Permission bits, kept when the file is replaced. */
  readonly mode: number;
  readonly version: FileVersion;
}

/** Open a jailed path for reading; refuses directories, other non-files and files `scope` refuses. */
export async function openRegularFile(real: string, display: string, scope: PathScope): Promise<OpenFile> {
  let handle: FileHandle;
  try {
    handle = await open(real, constants.O_RDONLY | OPEN_GUARDS);
  } catch (err) {
    if ((err as { code?: unknown }).code === 'EISDIR') throw notAFile(display, true);
    throw fromFsError(err, display);
  }
  try {
    await assertFdAllowed(handle, scope, display);
    const stat = await handle.stat();
    if (!stat.isFile()) throw notAFile(display, stat.isDirectory());
    return { handle, size: stat.size, mode: stat.mode & 0o7777, version: versionOf(stat) };
  } catch (err) {
    await handle.close();
    throw fromFsError(err, display);
  }
}

function notAFile(display: string, directory: boolean): Error {
  return toolFailure(
    'TOOL_IO_ERROR',
    directory ? `${display} is a directory; use list_dir` : `${display} is not a regular file`,
  );
}

/** True when the first bytes hold a NUL byte: the convention git and GNU grep use for binary. */
export async function looksBinary(handle: FileHandle): Promise<boolean> {
  const buffer = Buffer.alloc(BINARY_SNIFF_BYTES);
  const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
  return buffer.subarray(0, bytesRead).includes(0);
}

/** Read the whole (already size-checked) file from the start. */
export async function readAll(file: OpenFile, signal: AbortSignal | undefined): Promise<Buffer> {
  // Read by position so an earlier sniff does not move the start; the size is known and bounded.
  const buffer = Buffer.alloc(file.size);
  let offset = 0;
  while (offset < file.size) {
    signal?.throwIfAborted();
    const { bytesRead } = await file.handle.read(buffer, offset, file.size - offset, offset);
    if (bytesRead === 0) break; // the file shrank under us: return what is there
    offset += bytesRead;
  }
  return buffer.subarray(0, offset);
}

/**
 * A file's version as a fork saw it: inode, size and modification time. Every write goes
 * through `replaceAtomically`, which gives the file a new inode, so any change shows here.
 */
export type FileVersion = string;

export function versionOf(stat: { ino: number; size: number; mtimeMs: number }): FileVersion {
  return `${stat.ino}:${stat.size}:${stat.mtimeMs}`;
}

/**
 * Replace (or create) the file at `real` with `data` atomically: write a temp file in the same
 * directory, then rename it over the target. A reader opens either the old file or the new
 * one, never a truncated or half-written one (the in-place truncate-and-write it replaces let
 * a sibling fork read an empty file). `mode` keeps the old file's permissions. The directory
 * is opened once and checked against `scope`; the temp file and the rename go through that open
 * directory (dir-handle.ts), so a directory swapped for a symlink meanwhile changes nothing.
 * `create`: make missing parent directories the same way. Returns the new file's version.
 */
export async function replaceAtomically(
  real: string,
  data: Buffer,
  scope: PathScope,
  display: string,
  mode = 0o666,
  create = false,
): Promise<FileVersion> {
  const dir = create
    ? await makeDirInside(path.dirname(real), scope, display)
    : await openDirInside(path.dirname(real), scope, display);
  try {
    const temp = dir.entry(`.${path.basename(real)}.${randomBytes(6).toString('hex')}.forkcache-tmp`);
    const handle = await open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | OPEN_GUARDS, mode);
    let renamed = false;
    try {
      let offset = 0;
      while (offset < data.length) {
        const { bytesWritten } = await handle.write(data, offset, data.length - offset, offset);
        offset += bytesWritten;
      }
      await handle.chmod(mode); // the umask must not narrow the mode the file had
      await handle.sync();
      const version = versionOf(await handle.stat());
      await rename(temp, dir.entry(path.basename(real)));
      renamed = true;
      return version;
    } finally {
      await handle.close();
      if (!renamed) await unlink(temp).catch(() => {});
    }
  } finally {
    await dir.close();
  }
}
