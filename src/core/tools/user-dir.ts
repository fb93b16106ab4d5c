import { lstatSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ForkcacheError } from '../util/errors.ts';
import { stateDir } from '../util/state-dir.ts';

/*
 * A directory that belongs to the user running forkcache, for what every process of that user
 * shares (the per-file locks of path-lock.ts). A fixed path under the temp directory is shared
 * by every user of the machine: the first one to create it decides who may write there, and any
 * local user can create it first and plant files in it (issue 47). So the directory is looked
 * for in this order, and each candidate is used only when it is a real directory (not a
 * symlink), owned by the running user and writable by nobody else:
 *
 *   $FORKCACHE_LOCK_DIR                      (explicit: refused, never gone around, when unsafe)
 *   $XDG_RUNTIME_DIR/forkcache/locks         (the login session's own, mode 0700 by definition)
 *   <temp>/forkcache-<uid>/locks             (per user; made 0700)
 *   <forkcache's state directory>/locks      (under the user's home)
 *
 * A candidate another user made first (or a symlink planted there) is gone around, with a
 * warning that names it; when none is usable the error names them all.
 */

/** The environment variable that names the lock directory outright. */
export const LOCK_DIR_ENV = 'FORKCACHE_LOCK_DIR';

interface UserDirOptions {
  readonly env?: NodeJS.ProcessEnv;
  /** The running user's id (tests play another user); undefined where the platform has none. */
  readonly uid?: number | undefined;
  /** The temp directory (default os.tmpdir()). */
  readonly tmp?: string;
}

/** Why `dir` may not hold this user's private files, or undefined when it may. */
function unsafeReason(dir: string, uid: number | undefined): string | undefined {
  const info = lstatSync(dir, { throwIfNoEntry: false });
  if (info === undefined) return 'it does not exist';
  if (info.isSymbolicLink()) return 'it is a symbolic link';
  if (!info.isDirectory()) return 'it is not a directory';
  if (uid !== undefined && info.uid !== uid) return `it belongs to uid ${info.uid}, not to ${uid}`;
  if ((info.mode & 0o022) !== 0) return `others can write it (mode ${(info.mode & 0o777).toString(8)})`;
  return undefined;
}

/**
 * Make `parts` below `base` (each missing one with mode 0700, never following a symlink of
 * someone else's), and check every part made or found: the last one when all are safe, else
 * why the first that is not may not be used.
 */
function privateBelow(
  base: string,
  parts: readonly string[],
  uid: number | undefined,
): { dir: string } | { refused: string } {
  let dir = base;
  for (const part of parts) {
    dir = path.join(dir, part);
    try {
      mkdirSync(dir, { mode: 0o700 });
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      if (code !== 'EEXIST') return { refused: `${dir}: cannot be made (${String(code)})` };
    }
    const why = unsafeReason(dir, uid);
    if (why !== undefined) return { refused: `${dir}: ${why}` };
  }
  return { dir };
}

interface Candidate {
  readonly base: string;
  readonly parts: readonly string[];
}

function candidates(env: NodeJS.ProcessEnv, uid: number | undefined, tmp: string): Candidate[] {
  const list: Candidate[] = [];
  const xdg = env['XDG_RUNTIME_DIR'];
  if (xdg !== undefined && path.isAbsolute(xdg)) list.push({ base: xdg, parts: ['forkcache', 'locks'] });
  list.push({ base: tmp, parts: [`forkcache-${uid ?? 'user'}`, 'locks'] });
  const state = stateDir(env);
  list.push({ base: path.dirname(state), parts: [path.basename(state), 'locks'] });
  return list;
}

const resolved = new Map<string, string>();
const warned = new Set<string>();

/** The running user's lock directory (made on first use; see the rules above). */
export function userLockDir(options: UserDirOptions = {}): string {
  const env = options.env ?? process.env;
  const uid = 'uid' in options ? options.uid : process.getuid?.();
  const tmp = options.tmp ?? tmpdir();
  const explicit = env[LOCK_DIR_ENV];
  const key = [
    explicit,
    env['XDG_RUNTIME_DIR'],
    env['FORKCACHE_STATE_DIR'],
    env['XDG_STATE_HOME'],
    env['HOME'],
    uid,
    tmp,
  ].join('\0');
  const known = resolved.get(key);
  if (known !== undefined && unsafeReason(known, uid) === undefined) return known;

  if (explicit !== undefined && explicit !== '') {
    const dir = path.resolve(explicit);
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
    } catch {
      // reported below
    }
    const why = unsafeReason(dir, uid);
    if (why !== undefined) {
      throw new ForkcacheError('LOCK_DIR_UNSAFE', `${LOCK_DIR_ENV}=${dir}: not a private lock directory: ${why}`, {
        data: { path: dir, field: LOCK_DIR_ENV },
      });
    }
    resolved.set(key, dir);
    return dir;
  }

  const refused: string[] = [];
  for (const { base, parts } of candidates(env, uid, tmp)) {
    const found = privateBelow(base, parts, uid);
    if ('refused' in found) {
      refused.push(found.refused);
      continue;
    }
    const { dir } = found;
    if (refused.length > 0 && !warned.has(dir)) {
      warned.add(dir);
      process.emitWarning(`forkcache keeps its file locks in ${dir}: ${refused.join('; ')}`, {
        code: 'FORKCACHE_LOCK_DIR',
      });
    }
    resolved.set(key, dir);
    return dir;
  }
  throw new ForkcacheError(
    'LOCK_DIR_UNSAFE',
    `no private directory for forkcache's file locks (${refused.join('; ')}): set ${LOCK_DIR_ENV} to a directory only you can write`,
    { data: { field: LOCK_DIR_ENV } },
  );
}
