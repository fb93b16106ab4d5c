import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { BINARY_SNIFF_BYTES } from './limits.ts';
import { fromFsError, toolFailure } from './result.ts';

// The jail resolved every symlink already; O_NOFOLLOW makes a symlink swapped in since then an
// error (ELOOP) instead of a way out. O_NONBLOCK keeps a FIFO from blocking the open forever
// (the stat below then refuses it); it changes nothing for regular files. Windows has neither
// flag: there they are 0, a plain open.
export const OPEN_GUARDS = (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

/** An open regular file and its size. Close it with `handle.close()`. */
export interface OpenFile {
  readonly handle: FileHandle;
  readonly size: number;
}

/** Open a jailed path for reading (or read-write); refuses directories and other non-files. */
export async function openRegularFile(real: string, display: string, writable = false): Promise<OpenFile> {
  let handle: FileHandle;
  try {
    handle = await open(real, (writable ? constants.O_RDWR : constants.O_RDONLY) | OPEN_GUARDS);
  } catch (err) {
    // Opening a directory for writing fails here rather than at the stat below.
    if ((err as { code?: unknown }).code === 'EISDIR') throw notAFile(display, true);
    throw fromFsError(err, display);
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw notAFile(display, stat.isDirectory());
    return { handle, size: stat.size };
  } catch (err) {
    await handle.close();
    throw fromFsError(err, display);
  }
}

function notAFile(display: string, directory: boolean): Error {
  return toolFailure('TOOL_IO_ERROR', directory ? `${display} is a directory; use list_dir` : `${display} is not a regular file`);
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

/** Replace the file's contents in place, keeping its inode (mode, hard links, owner). */
export async function overwrite(handle: FileHandle, data: Buffer): Promise<void> {
  await handle.truncate(0);
  let offset = 0;
  while (offset < data.length) {
    const { bytesWritten } = await handle.write(data, offset, data.length - offset, offset);
    offset += bytesWritten;
  }
}
