import { createHash } from 'node:crypto';
import { open, readFile, stat, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { userLockDir } from './user-dir.ts';

/**
 * A per-file lock shared by every fork, whatever thread or process it runs in: forks of one
 * engine run on several worker threads, and `edit_file` is a read-modify-write, so two forks
 * editing one file at once would each write over the other's change (a lost edit).
 *
 * The lock is a file created with O_EXCL (atomic on every local file system) in a directory
 * outside the workspace, so tools never see it: the running user's own (user-dir.ts), which no
 * other user can create first or plant a lock in (issue 47). It names its holder's pid and host;
 * a lock whose process is gone (kill -9) or that is older than `STALE_MS` (a thread that died
 * holding it) is taken over; a pid is judged only on the host that wrote it (a home directory
 * shared by several machines). Held only for one read-modify-write of a file under the edit
 * size limit.
 */
const STALE_MS = 30_000;

const HOST = hostname();

function lockPathOf(dir: string, real: string): string {
  return path.join(dir, `${createHash('sha256').update(real).digest('hex').slice(0, 32)}.lock`);
}

/** Whether a process with this pid exists (EPERM: it does, it is another user's). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as { code?: unknown }).code === 'EPERM';
  }
}

async function isStale(lockPath: string, now: number): Promise<boolean> {
  try {
    const [text, info] = await Promise.all([readFile(lockPath, 'utf8'), stat(lockPath)]);
    const [pidText, host] = text.split(' ', 2);
    const pid = Number.parseInt(pidText ?? '', 10);
    const here = host === undefined || host === HOST;
    if (here && Number.isInteger(pid) && pid > 0 && !processAlive(pid)) return true;
    return now - info.mtimeMs > STALE_MS;
  } catch {
    return false; // released meanwhile (or not written yet): just try again
  }
}

/**
 * Run `work` while holding the lock of the file at `real` (an absolute, jailed path). Waits
 * for another holder with a short backoff; an abort stops the wait with the signal's reason.
 */
export async function withPathLock<T>(
  real: string,
  signal: AbortSignal | undefined,
  work: () => Promise<T>,
): Promise<T> {
  const lockPath = lockPathOf(userLockDir(), real);
  for (let wait = 1; ; wait = Math.min(wait * 2, 25)) {
    signal?.throwIfAborted();
    try {
      const handle = await open(lockPath, 'wx');
      await handle.writeFile(`${process.pid} ${HOST}`);
      await handle.close();
      break;
    } catch (err) {
      if ((err as { code?: unknown }).code !== 'EEXIST') throw err;
    }
    if (await isStale(lockPath, Date.now())) await unlink(lockPath).catch(() => {});
    else await delay(wait, undefined, { signal });
  }
  try {
    return await work();
  } finally {
    await unlink(lockPath).catch(() => {});
  }
}
