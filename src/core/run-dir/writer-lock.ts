import { randomBytes } from 'node:crypto';
import { linkSync, readdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { ForkcacheError } from '../util/errors.ts';
import { processAlive } from '../tools/path-lock.ts';

/*
 * One writer per run directory (issue 24, route 6: two `resume`s of one run at once both
 * finished it: every rename twice, two `end` records per transcript). A lock file names its
 * holder by pid and process start time (/proc/PID/stat), so a holder that died (kill -9) or
 * whose pid was reused since is seen as gone and its lock taken over.
 *
 * The lock is the highest-numbered `writer.lock.N` of the directory. Taking it creates N+1
 * with `link` (atomic, never replaces a file), after finding N's holder gone: of several
 * processes racing for a stale lock exactly one creates N+1; the others find N+1 held. A
 * process that created a lower number while a higher one appeared gives its own up again.
 */

const PREFIX = 'writer.lock.';

interface Holder {
  pid: number;
  /** Field 22 of /proc/PID/stat (clock ticks since boot): tells a pid reused since apart. */
  start: string | null;
  host: string;
  command: string;
  since: string;
  nonce: string;
}

/** A held lock; `release` removes it (a lock left by a crash is taken over later). */
export interface WriterLock {
  readonly path: string;
  release(): void;
}

function startTime(pid: number): string | null | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (fields[0] === 'Z') return undefined; // dead, not yet reaped
    return fields[19] ?? null;
  } catch (err) {
    if ((err as { code?: unknown }).code === 'ENOENT' && process.platform === 'linux') return undefined;
    return null; // no /proc here: only the pid can be checked
  }
}

/** Whether the holder still runs: false when it is gone or its pid now belongs to another process. */
function holderAlive(holder: Holder): boolean {
  if (holder.host !== hostname()) return true; // another machine's process: cannot know, so assume it runs
  const start = startTime(holder.pid);
  if (start === undefined) return false;
  if (start !== null && holder.start !== null) return start === holder.start;
  return processAlive(holder.pid);
}

function readHolder(path: string): Holder | undefined | 'gone' {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return 'gone';
  }
  try {
    const h = JSON.parse(text) as Partial<Holder>;
    if (typeof h.pid === 'number' && typeof h.host === 'string') return h as Holder;
  } catch {
    // not a lock this code wrote
  }
  return undefined; // unreadable: no one can be holding it
}

function generations(dir: string): number[] {
  return readdirSync(dir)
    .filter((n) => n.startsWith(PREFIX) && /^\d+$/.test(n.slice(PREFIX.length)))
    .map((n) => Number(n.slice(PREFIX.length)))
    .sort((a, b) => b - a);
}

function ownCommand(): string {
  try {
    return readFileSync('/proc/self/cmdline', 'utf8').split('\0').filter(Boolean).join(' ').slice(0, 300);
  } catch {
    return process.argv.join(' ').slice(0, 300);
  }
}

function locked(dir: string, path: string, holder: Holder): ForkcacheError {
  const other = holder.host !== hostname();
  return new ForkcacheError(
    'RUN_DIR_LOCKED',
    `${dir} is being written by another forkcache: pid ${holder.pid}${other ? ` on ${holder.host}` : ''} (${holder.command}), since ${holder.since}. One process at a time writes a run directory: wait for it to end, or stop it${other ? `; if it is gone, remove ${path}` : ''}`,
    { data: { path: dir, pid: holder.pid, host: holder.host, command: holder.command, since: holder.since } },
  );
}

/** Take the run directory's writer lock now, or throw RUN_DIR_LOCKED naming its holder. */
export function lockRunDir(dir: string): WriterLock {
  const me: Holder = {
    pid: process.pid,
    start: startTime(process.pid) ?? null,
    host: hostname(),
    command: ownCommand(),
    since: new Date().toISOString(),
    nonce: randomBytes(8).toString('hex'),
  };
  const temp = join(dir, `.${PREFIX}${me.nonce}`);
  writeFileSync(temp, `${JSON.stringify(me)}\n`);
  try {
    for (let attempt = 0; attempt < 32; attempt++) {
      const top = generations(dir)[0];
      if (top !== undefined) {
        const holder = readHolder(join(dir, `${PREFIX}${top}`));
        if (holder === 'gone') continue; // released meanwhile: look again
        if (holder !== undefined && holderAlive(holder)) throw locked(dir, join(dir, `${PREFIX}${top}`), holder);
      }
      const n = (top ?? 0) + 1;
      const path = join(dir, `${PREFIX}${n}`);
      try {
        linkSync(temp, path);
      } catch (err) {
        if ((err as { code?: unknown }).code === 'EEXIST') continue; // another won n: look at it
        throw err;
      }
      if ((generations(dir)[0] ?? n) > n) {
        unlinkSync(path); // a higher one appeared meanwhile: its maker holds the lock
        continue;
      }
      for (const old of generations(dir).filter((g) => g < n)) unlinkQuietly(join(dir, `${PREFIX}${old}`));
      return { path, release: () => releaseIfOurs(path, me.nonce) };
    }
    throw new ForkcacheError(
      'RUN_DIR_LOCKED',
      `${dir}: could not take the writer lock (too many processes competing for it)`,
      {
        data: { path: dir },
      },
    );
  } finally {
    unlinkQuietly(temp);
  }
}

function releaseIfOurs(path: string, nonce: string): void {
  const holder = readHolder(path);
  if (holder !== 'gone' && holder?.nonce === nonce) unlinkQuietly(path);
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // gone already
  }
}
