import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

/*
 * forkcache's state directory: what one user's forkcache keeps between runs, outside every
 * workspace and run directory (the key that signs run directories, run-dir/run-key.ts; the
 * fallback for the file locks, tools/user-dir.ts):
 *
 *   $FORKCACHE_STATE_DIR   (CI, tests, a key shared by distributed hosts)
 *   $XDG_STATE_HOME/forkcache
 *   ~/.local/state/forkcache
 */

/** The environment variable that moves forkcache's state directory. */
export const STATE_DIR_ENV = 'FORKCACHE_STATE_DIR';

/** forkcache's state directory (absolute), from the environment. */
export function stateDir(env: NodeJS.ProcessEnv = process.env): string {
  const explicit = env[STATE_DIR_ENV];
  if (explicit !== undefined && explicit !== '') return resolve(explicit);
  const xdg = env['XDG_STATE_HOME'];
  if (xdg !== undefined && xdg.startsWith('/')) return join(xdg, 'forkcache');
  return join(homedir(), '.local', 'state', 'forkcache');
}
