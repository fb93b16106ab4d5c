/**
 * The first process of every bash call: `bash -c LAUNCHER forkcache-bash COMMAND`.
 *
 * It says it is up (one byte, `LAUNCHER_READY`, first on its stdout), then waits for one line on
 * its stdin before it runs anything. forkcache writes that line only when both hold:
 * - the command is under watch (the parent-death watchdog spawned, see process-group.ts): a
 *   forkcache killed between spawning the command and arming the watchdog used to leave the
 *   command running for good (issue 25: under load the gap was long enough to hit);
 * - forkcache has read that first byte: inside bubblewrap the launcher starts only once the
 *   sandbox is set up, its parent-death signal (`--die-with-parent`) armed. bubblewrap arms it
 *   without looking whether its parent is still there: a forkcache killed while bubblewrap set
 *   up, the line already written, left the sandbox and its command running for good (a host
 *   killed under load, in the distributed tests).
 * Killed before the line, forkcache closes the pipe, `read` sees end of file and nothing runs.
 *
 * Then stdin is closed (commands get none, as before), the resource limits are set as hard
 * limits (a command cannot raise them again) and the command replaces the launcher.
 */

/** Resource limits set inside the sandbox before the command starts (`ulimit` units: KiB). */
export interface LauncherLimits {
  /** RLIMIT_DATA: writable private memory of one process (heap, mmap), in KiB. */
  readonly dataKb?: number | undefined;
  /** RLIMIT_FSIZE: the largest file a process may write, in KiB. */
  readonly fileKb?: number | undefined;
  /** RLIMIT_NPROC: processes of the sandbox's user (only where it binds, see sandbox-limits.ts). */
  readonly processes?: number | undefined;
}

/** The byte the launcher writes first on its stdout, once it runs; not part of the command's output. */
export const LAUNCHER_READY = 0x06;

/**
 * A non-interactive bash runs the file `BASH_ENV` names before its first line: the launcher's
 * would come after whatever that file prints or does, before its go. The launcher gets it under
 * this name instead and hands it back to the command's bash (`launcherEnv`).
 */
const BASH_ENV_CARRIER = 'FORKCACHE_BASH_ENV';

/** The launcher's environment: the command's, its `BASH_ENV` carried under another name. */
export function launcherEnv(env: Readonly<Record<string, string>>): Readonly<Record<string, string>> {
  if (!Object.hasOwn(env, 'BASH_ENV')) return env;
  const { BASH_ENV: file, ...rest } = env;
  return { ...rest, [BASH_ENV_CARRIER]: file! };
}

/** Exit code of a launcher that was never told to start (forkcache went away first). */
export const NOT_STARTED_EXIT = 125;
/** Exit code of a launcher that could not set its limits (the command did not run). */
export const LIMITS_FAILED_EXIT = 126;

const int = (n: number): string => String(Math.max(0, Math.floor(n)));

/** The launcher script for `bash -c`; `$1` is the command. */
function launcherScript(limits: LauncherLimits = {}): string {
  const flags: string[] = ['-c 0'];
  if (limits.dataKb !== undefined) flags.push(`-d ${int(limits.dataKb)}`);
  if (limits.fileKb !== undefined) flags.push(`-f ${int(limits.fileKb)}`);
  if (limits.processes !== undefined) flags.push(`-u ${int(limits.processes)}`);
  const ulimit = `ulimit -S -H ${flags.join(' ')} || { echo 'forkcache: could not set the sandbox limits' >&2; exit ${LIMITS_FAILED_EXIT}; }`;
  return [
    `printf '\\${LAUNCHER_READY.toString(8).padStart(3, '0')}'`,
    `read -r _ || exit ${NOT_STARTED_EXIT}`,
    'exec 0</dev/null',
    ulimit,
    `if [ -n "\${${BASH_ENV_CARRIER}+x}" ]; then export BASH_ENV="$${BASH_ENV_CARRIER}"; unset ${BASH_ENV_CARRIER}; fi`,
    'exec bash --norc --noprofile -c "$1"',
  ].join('\n');
}

/** `bash` arguments that run `command` through the launcher. */
export function launcherArgs(command: string, limits?: LauncherLimits): string[] {
  // Node's stdio pipes are socket pairs, and a non-interactive bash whose stdin is a socket takes
  // itself for a remote shell and runs ~/.bashrc (Debian builds it so): the host user's rc file
  // (its variables, a `pyenv rehash` waiting on a stale lock) would run in every fork's command.
  return ['--norc', '--noprofile', '-c', launcherScript(limits), 'forkcache-bash', command];
}
