import { createHmac, randomBytes } from 'node:crypto';
import { chmodSync, linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ForkcacheError } from '../util/errors.ts';
import { STATE_DIR_ENV, stateDir } from '../util/state-dir.ts';

/*
 * The key that signs run directories (run-mac.ts): `resume` continues only what forkcache itself
 * wrote. It lives in forkcache's state directory, outside every workspace and run directory (a
 * fork can write those: issue 24, route 2), created 0600 on first use:
 *
 *   $FORKCACHE_STATE_DIR/run-key   (CI, tests, a key shared by distributed hosts)
 *   $XDG_STATE_HOME/forkcache/run-key
 *   ~/.local/state/forkcache/run-key
 *
 * The tools never reach that directory and the bash sandbox hides it, even when a workspace
 * contains it (a workspace at $HOME); bash without a sandbox can read it (docs/security.md).
 */

const KEY_FILE = 'run-key';

/** A loaded key: its bytes, and a short public id (which key signed a file, for error messages). */
export interface RunKey {
  readonly bytes: Buffer;
  readonly id: string;
}

/** The id a key signs with: a MAC of a fixed text, so it says nothing about the key. */
export function keyIdOf(bytes: Buffer): string {
  return createHmac('sha256', bytes).update('forkcache run key id').digest('hex').slice(0, 8);
}

const cache = new Map<string, RunKey>();

/** A key handed over as hex (the main thread gives it to the workers that write transcripts). */
export function runKeyFromHex(hex: string): RunKey {
  return parseKey(hex, 'the run key handed to this worker');
}

function parseKey(text: string, file: string): RunKey {
  const hex = text.trim();
  if (!/^[0-9a-f]{64}$/.test(hex)) {
    throw new ForkcacheError('RUN_KEY_UNAVAILABLE', `${file}: not a forkcache run key (expected 64 hex digits)`, {
      data: { path: file },
    });
  }
  const bytes = Buffer.from(hex, 'hex');
  return { bytes, id: keyIdOf(bytes) };
}

/**
 * This machine's run key, created on first use. Two processes creating it at once agree: the
 * key is written to a private temp file, then linked into place (link never replaces a file),
 * and whoever loses the link reads the winner's.
 */
export function loadRunKey(env: NodeJS.ProcessEnv = process.env): RunKey {
  const dir = stateDir(env);
  const file = join(dir, KEY_FILE);
  const cached = cache.get(file);
  if (cached) return cached;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as { code?: unknown }).code !== 'ENOENT') throw unavailable(file, err);
    text = createKey(dir, file);
  }
  const key = parseKey(text, file);
  cache.set(file, key);
  return key;
}

function createKey(dir: string, file: string): string {
  const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    writeFileSync(temp, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
    chmodSync(temp, 0o600); // whatever the umask
    try {
      linkSync(temp, file);
    } catch (err) {
      if ((err as { code?: unknown }).code !== 'EEXIST') throw err;
    }
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw unavailable(file, err);
  } finally {
    try {
      unlinkSync(temp);
    } catch {
      // never written
    }
  }
}

function unavailable(file: string, cause: unknown): ForkcacheError {
  return new ForkcacheError(
    'RUN_KEY_UNAVAILABLE',
    `cannot read or create the key that signs run directories, ${file} (${(cause as Error).message}); set ${STATE_DIR_ENV} to a directory forkcache may write`,
    { cause, data: { path: file } },
  );
}

/** The directories no fork may reach: the runs directory (when there is one) and the state directory. */
export function protectedDirs(runDir: string | undefined, env: NodeJS.ProcessEnv = process.env): string[] {
  return [...(runDir === undefined ? [] : [resolve(runDir)]), stateDir(env)];
}
