import { existsSync, lstatSync, mkdirSync, mkdtempSync, rmSync, rmdirSync } from 'node:fs';
import { open, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ForkcacheError } from '../../util/errors.ts';
import { execFileText, pathOnlyEnv, probeProgram, whyFailed } from '../../util/exec-file.ts';
import { findExecutable } from '../find-executable.ts';

/*
 * A fork's worktree on a file system of its own: a sparse ext4 image, loop-mounted at the
 * worktree's path. RLIMIT_FSIZE bounds each file a command writes, never their number; a file
 * system bounds everything written on it, by any route: bash in the sandbox (`dd`, `fallocate`,
 * many small files, which run out of blocks or inodes), the file tools (write_file, edit_file
 * write there too), a file kept open after it was deleted (its blocks stay on this file system
 * until the sandbox dies). A hard link cannot leave it (EXDEV), and a sparse file takes only
 * the blocks it wrote. The image is sparse on the host: it takes what the fork wrote, never
 * more than its size. A loop mount needs root (CAP_SYS_ADMIN of the host); elsewhere the bound
 * is missing and the run says so. Setting one up costs a truncate, an mkfs of an empty file
 * system and a mount (`bench/reliability/workspace-disk.ts`).
 */

const BLOCK = 4096;
/** Bytes of an inode in the table mkfs writes. */
const INODE_BYTES = 256;
/** Superblock, group descriptors, bitmaps, root and lost+found: a floor for small images. */
const FIXED_BYTES = 4 * 1024 * 1024;
/** One inode for every 16 KiB a fork may add (ext4's own default ratio), at least this many. */
const MIN_SPARE_INODES = 4096;

interface Tools {
  readonly mkfs: string;
  readonly mount: string;
  readonly umount: string;
}

const find = (name: string): string | undefined => findExecutable(name, ['/usr/sbin', '/sbin', '/usr/bin', '/bin']);

function probe(): Tools | { missing: string } {
  if ((process.getuid?.() ?? 1) !== 0) return { missing: 'a loop mount needs root' };
  if (!existsSync('/dev/loop-control')) return { missing: 'no loop devices here (/dev/loop-control)' };
  const tools = { mkfs: find('mkfs.ext4'), mount: find('mount'), umount: find('umount') };
  if (tools.mkfs === undefined) return { missing: 'no mkfs.ext4 (Debian: e2fsprogs)' };
  if (tools.mount === undefined || tools.umount === undefined) return { missing: 'no mount/umount (util-linux)' };
  const found = tools as Tools;
  // one real mount, once: root in a container often has no CAP_SYS_ADMIN or no loop device
  const dir = mkdtempSync(path.join(tmpdir(), 'forkcache-disk-probe-'));
  try {
    const image = path.join(dir, 'image');
    const at = path.join(dir, 'at');
    mkdirSync(at);
    const steps: Array<[string, string[]]> = [
      ['truncate', ['-s', String(FIXED_BYTES), image]],
      [found.mkfs, mkfsArgs(image, 64)],
      [found.mount, ['-o', MOUNT_OPTIONS, image, at]],
      [found.umount, [at]],
    ];
    for (const [file, args] of steps) {
      const why = probeProgram(file, args);
      if (why !== undefined) {
        if (file === found.umount) probeProgram(found.umount, ['-l', at]);
        return { missing: `${path.basename(file)} failed here: ${why}` };
      }
    }
    return found;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

let probed: Tools | { missing: string } | undefined;

/** Whether a worktree can get a disk of its own here, or why not (probed once per process). */
export function workspaceDiskSupport(): { ok: true } | { missing: string } {
  probed ??= probe();
  return 'missing' in probed ? probed : { ok: true };
}

// no setuid programs or device files planted for the host; discard: a deleted file's blocks go
// back to the host; noinit_itable: the kernel does not fill the sparse image's inode table
const MOUNT_OPTIONS = 'loop,nosuid,nodev,discard,noinit_itable';

function mkfsArgs(image: string, inodes: number): string[] {
  // no journal (a scratch file system: a crash's leftovers are remade, never trusted), no
  // blocks reserved for root (the sandbox may run as root)
  return ['-q', '-F', '-t', 'ext4', '-b', String(BLOCK), '-N', String(inodes), '-m', '0', '-O', '^has_journal', image];
}

/** Where the image of the worktree at `worktree` (`<fan-out>/worktrees/<forkId>`) lives: `<fan-out>/disks/<forkId>.img`. */
export function diskImageOf(worktree: string): string {
  return path.join(path.dirname(path.dirname(worktree)), 'disks', `${path.basename(worktree)}.img`);
}

/** What a checkout puts on the disk: bytes in whole blocks, and inodes. */
interface CheckoutSize {
  readonly bytes: number;
  readonly entries: number;
}

/** Blocks of the files and directories of `git ls-tree -r -l -z` output (an upper bound: tails round up). */
export function checkoutSizeOf(lsTree: string): CheckoutSize {
  let bytes = BLOCK; // the worktree's `.git` file
  let entries = 1;
  const dirs = new Set<string>();
  for (const record of lsTree.split('\0')) {
    if (record === '') continue;
    const tab = record.indexOf('\t');
    const [, type, , size] = record.slice(0, tab).split(/\s+/);
    const file = record.slice(tab + 1);
    entries++;
    if (type === 'blob') bytes += Math.ceil(Number(size) / BLOCK) * BLOCK;
    else bytes += BLOCK; // a gitlink: an empty directory
    for (let dir = path.posix.dirname(file); dir !== '.' && !dirs.has(dir); dir = path.posix.dirname(dir))
      dirs.add(dir);
  }
  return { bytes: bytes + dirs.size * BLOCK, entries: entries + dirs.size };
}

/** The size of a fork's disk: the checkout, then `maxMb` more, then the file system's own tables. */
export function diskLayout(checkout: CheckoutSize, maxMb: number): { bytes: number; inodes: number } {
  const spare = maxMb * 1024 * 1024;
  const inodes = checkout.entries + Math.max(MIN_SPARE_INODES, Math.ceil(spare / (16 * 1024)));
  const bytes = checkout.bytes + spare + inodes * INODE_BYTES + FIXED_BYTES;
  return { bytes: Math.ceil(bytes / BLOCK) * BLOCK, inodes };
}

function tools(): Tools {
  probed ??= probe();
  if ('missing' in probed)
    throw new ForkcacheError('WORKSPACE_DISK_FAILED', `a worktree's disk cannot be made here: ${probed.missing}`);
  return probed;
}

/** Run one of the disk's programs; a failure is WORKSPACE_DISK_FAILED naming `what` and the program's message. */
async function run(what: string, file: string, args: readonly string[]): Promise<void> {
  // nothing of this process' environment (its key): these programs need only PATH
  const r = await execFileText(file, args, { env: pathOnlyEnv() });
  if (r.code !== 0) throw new ForkcacheError('WORKSPACE_DISK_FAILED', `${what}: ${whyFailed(r)}`);
}

/** True when `dir` is the root of a file system mounted there (its device differs from its parent's). */
export function isMountPoint(dir: string): boolean {
  try {
    return lstatSync(dir).dev !== lstatSync(path.dirname(dir)).dev;
  } catch {
    return false;
  }
}

/**
 * A new empty file system of `bytes` mounted at `dir` (created, must be absent or empty),
 * backed by the sparse file `image`. On failure nothing is left.
 */
export async function makeDisk(image: string, dir: string, layout: { bytes: number; inodes: number }): Promise<void> {
  const { mkfs } = tools();
  mkdirSync(path.dirname(image), { recursive: true });
  const file = await open(image, 'w', 0o600);
  try {
    await file.truncate(layout.bytes);
  } finally {
    await file.close();
  }
  try {
    await run(`mkfs.ext4 of ${image}`, mkfs, mkfsArgs(image, layout.inodes));
  } catch (err) {
    await unlink(image).catch(() => {});
    throw err;
  }
  await attachDisk(image, dir);
}

/** Mount an existing image at `dir` (a resumed fork's, after a reboot); nothing when it is mounted already. */
export async function attachDisk(image: string, dir: string): Promise<void> {
  const { mount } = tools();
  mkdirSync(dir, { recursive: true });
  if (isMountPoint(dir)) return;
  await run(`mount of ${image} at ${dir}`, mount, ['-o', MOUNT_OPTIONS, image, dir]);
  // git checks out only into an empty directory
  try {
    rmdirSync(path.join(dir, 'lost+found'));
  } catch {
    // a resumed fork's disk: removed the first time
  }
}

/**
 * Unmount the disk at `dir`, if one is mounted there, and delete its image: what the fork left
 * on it is gone at once (no `rm -rf` of a checkout). A disk still busy (a process holding a file
 * on it) is detached lazily: the kernel frees it once that process ends.
 */
export async function detachDisk(dir: string): Promise<void> {
  const image = diskImageOf(dir);
  if (isMountPoint(dir)) {
    const { umount } = tools();
    try {
      await run(`umount of ${dir}`, umount, [dir]);
    } catch {
      await run(`umount of ${dir}`, umount, ['-l', dir]);
    }
  }
  await unlink(image).catch(() => {});
}
