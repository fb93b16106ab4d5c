import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import path from 'node:path';
import { ForkcacheError } from '../errors.ts';

/**
 * Where `bash` runs. `bwrap`: inside bubblewrap (Debian's `bubblewrap` package), in its own PID
 * namespace with a fresh /proc (forkcache's process, and its environment with the API key, are
 * invisible), `/` read-only and the workspace the only writable path, killed with its parent.
 * `none`: a plain child in its own process group, killed on timeout, abort and, through a
 * watchdog, the parent's death; it runs with the user's rights and can read what they can.
 */
export type SandboxKind = 'bwrap' | 'none';

/** `auto`: bubblewrap when it is installed and works here, otherwise none (and the run says so). */
export type SandboxChoice = 'auto' | SandboxKind;

/** What to spawn for one command. */
export interface SpawnSpec {
  readonly file: string;
  readonly args: string[];
  /** The spawned process's own environment (bwrap's is visible inside as PID 1's: kept minimal). */
  readonly env: Record<string, string>;
}

function onPath(name: string, envPath: string | undefined): string | undefined {
  for (const dir of (envPath ?? '/usr/bin:/bin').split(path.delimiter)) {
    if (dir === '') continue;
    const file = path.join(dir, name);
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // not here
    }
  }
  return undefined;
}

let probed: string | null | undefined;

/**
 * The bwrap binary, if it is installed and can create the namespaces it needs here (user
 * namespaces may be disabled, e.g. in some containers): checked once per process by running
 * `true` in the sandbox this module builds.
 */
export function findBubblewrap(): string | undefined {
  if (probed !== undefined) return probed ?? undefined;
  const file = process.platform === 'linux' ? onPath('bwrap', process.env['PATH']) : undefined;
  probed = null;
  if (file !== undefined) {
    const spec = bwrapSpec(file, '/', 'true', { PATH: '/usr/bin:/bin' });
    const result = spawnSync(spec.file, spec.args, { env: spec.env, stdio: 'ignore', timeout: 10_000 });
    if (result.status === 0) probed = file;
  }
  return probed ?? undefined;
}

/** The sandbox `choice` resolves to on this machine. */
export function resolveSandbox(choice: SandboxChoice): SandboxKind {
  if (choice === 'none') return 'none';
  if (findBubblewrap() !== undefined) return 'bwrap';
  if (choice === 'bwrap') {
    throw new ForkcacheError(
      'TOOL_CONFIG_INVALID',
      'sandbox: "bwrap" was asked for, but bubblewrap is not installed or cannot create namespaces here (Debian: apt-get install bubblewrap)',
      { data: { field: 'sandbox' } },
    );
  }
  return 'none';
}

/** `bwrap … bash -c command`, the workspace bound read-write at its own path. */
function bwrapSpec(
  bwrap: string,
  workspace: string,
  command: string,
  env: Readonly<Record<string, string>>,
): SpawnSpec {
  const setenv = Object.entries(env).flatMap(([key, value]) => ['--setenv', key, value]);
  const args = [
    '--ro-bind',
    '/',
    '/',
    '--dev',
    '/dev',
    '--proc',
    '/proc', // a fresh /proc of the new PID namespace: no /proc/$PPID/environ of ours
    '--tmpfs',
    '/tmp',
    '--bind',
    workspace,
    workspace, // after /tmp: the workspace may live under it
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--die-with-parent', // the whole namespace dies with us, kill -9 included; setsid cannot escape
    '--new-session',
    '--clearenv',
    ...setenv,
    '--chdir',
    workspace,
    'bash',
    '-c',
    command,
  ];
  // bwrap's own environment is readable inside as /proc/1/environ: only PATH, never the key.
  return { file: bwrap, args, env: { PATH: env['PATH'] ?? '/usr/bin:/bin' } };
}

/** How to spawn `command` in `workspace` with `env`, in the sandbox `kind`. */
export function spawnSpec(
  kind: SandboxKind,
  workspace: string,
  command: string,
  env: Readonly<Record<string, string>>,
): SpawnSpec {
  const bwrap = kind === 'bwrap' ? findBubblewrap() : undefined;
  if (bwrap !== undefined) return bwrapSpec(bwrap, workspace, command, env);
  return { file: 'bash', args: ['-c', command], env: { ...env } };
}

/** The line a run prints when forks may use bash and no sandbox is available. */
export const UNSANDBOXED_NOTE =
  "bash is NOT sandboxed (bubblewrap is not installed or cannot run here): commands run with your rights, can read your files and this process's environment; their output is redacted of the API key. Install bubblewrap (Debian: apt-get install bubblewrap) to sandbox them.";
