import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { build } from 'esbuild';

/*
 * Running forkcache's code as another user (`nobody`, through setpriv), for the tests that need
 * a user without root: no pids cgroup, no loop mount, someone else's files (issue 47). That user
 * may not be able to reach the checkout (a clone under root's home, mode 700, or under a
 * `mktemp -d` folder), so nothing is loaded from it: the test's entry file is bundled with
 * every module it imports into one file, in a folder of its own under the temp directory that
 * the user can read. When that cannot be done, `reason` says why, in one line, and the test skips.
 */

export const NOBODY = 65534;

const setpriv = ['/usr/bin/setpriv', '/bin/setpriv'].find((f) => existsSync(f));
const isRoot = (process.getuid?.() ?? 1) === 0;

/** Why no test here can run code as another user, or undefined when one can. */
export const otherUserUnavailable: string | undefined = !isRoot
  ? 'running as another user needs root (setpriv to become nobody); run the suite as root to include it'
  : setpriv === undefined
    ? 'running as another user needs setpriv (util-linux)'
    : undefined;

export interface Staged {
  /** The folder holding the bundle (readable by everyone). */
  readonly dir: string;
  /** Run the bundle as `nobody` with these arguments. */
  run(args: readonly string[], options?: { env?: NodeJS.ProcessEnv; cwd?: string }): ChildProcessWithoutNullStreams;
  cleanup(): void;
}

const asNobody = (command: readonly string[]): string[] => [
  `--reuid=${NOBODY}`,
  `--regid=${NOBODY}`,
  '--clear-groups',
  ...command,
];

/**
 * Bundle `entry` (a test fixture importing forkcache's sources) where `nobody` can read it.
 * Returns the staged bundle, or the one-line reason it cannot be run as `nobody` here.
 */
export async function stageForOtherUser(entry: string): Promise<Staged | { reason: string }> {
  if (otherUserUnavailable !== undefined) return { reason: otherUserUnavailable };
  const dir = mkdtempSync(path.join(tmpdir(), 'forkcache-as-user-'));
  chmodSync(dir, 0o755);
  const file = path.join(dir, 'entry.mjs');
  await build({
    entryPoints: [entry],
    outfile: file,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    logLevel: 'error',
    // a CommonJS dependency's require() of a Node module, inside an ES module bundle
    banner: {
      js: "import { createRequire as __forkcacheRequire } from 'node:module'; const require = __forkcacheRequire(import.meta.url);",
    },
  });
  chmodSync(file, 0o644);
  const readable = spawnSync(setpriv!, asNobody(['test', '-r', file]), { stdio: 'ignore' });
  if (readable.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    return { reason: `nobody cannot read ${file}: a folder above the temp directory is private (set TMPDIR)` };
  }
  return {
    dir,
    run: (args, options = {}) =>
      spawn(setpriv!, asNobody([process.execPath, file, ...args]), {
        cwd: options.cwd ?? dir,
        stdio: ['pipe', 'pipe', 'pipe'],
        env: options.env ?? process.env,
      }),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}
