import { closeSync, constants, fstatSync, lstatSync, openSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import type { BwrapFeatures } from './bwrap-probe.ts';
import { hardeningArgs } from './bwrap-probe.ts';
import { isInside } from '../jail/protected-paths.ts';
import { launcherArgs } from './launcher.ts';
import { applyLimits } from './limits.ts';
import { etcArgs, etcData, procMaskArgs, systemViewArgs } from './view.ts';
import type { SandboxOptions, SpawnSpec } from './types.ts';

const MIB = 1024 * 1024;

/** /dev/shm gets a share of the /tmp cap (semaphores, shared memory of multiprocessing tools). */
const SHM_MB = 64;

/**
 * The directories between the workspace and a hidden directory inside it, each bound onto
 * itself: mount points cannot be renamed, so a command cannot move `.forkcache` aside and have
 * the next sandbox mask an empty path while the real run directory shows under another name.
 */
function hideArgs(workspace: string, hidden: string, sized: boolean): string[] {
  const args: string[] = [];
  const parts = path.relative(workspace, hidden).split(path.sep);
  let at = workspace;
  for (const part of parts.slice(0, -1)) {
    at = path.join(at, part);
    args.push('--bind', at, at);
  }
  return [...args, ...(sized ? ['--size', String(MIB)] : []), '--tmpfs', hidden, '--remount-ro', hidden];
}

/**
 * The workspace's `.git` (the repository's git dir, or a worktree's pointer file), opened
 * without following links and checked to be that very entry: bound read-only by its fd, so a
 * command can neither plant a hook or an `fsmonitor` for the host's git to run nor repoint a
 * worktree, and a swap for a symlink between the check and the mount changes nothing.
 */
function openGitEntry(workspace: string): number | undefined {
  const entry = path.join(workspace, '.git');
  let stat;
  try {
    stat = lstatSync(entry);
  } catch {
    return undefined;
  }
  if (!stat.isDirectory() && !stat.isFile()) return undefined; // a symlink leads outside the view: nothing to protect
  const flags =
    constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | (stat.isDirectory() ? constants.O_DIRECTORY : 0);
  let fd: number;
  try {
    fd = openSync(entry, flags);
  } catch {
    return undefined;
  }
  const opened = fstatSync(fd);
  let real: string | undefined;
  try {
    real = readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    real = undefined;
  }
  if (real !== entry || !(opened.isDirectory() || opened.isFile())) {
    closeSync(fd);
    return undefined;
  }
  return fd;
}

/** `bwrap … bash LAUNCHER command`: the spawn of one command in the bubblewrap sandbox. */
export function bwrapSpawnSpec(
  features: BwrapFeatures,
  workspace: string,
  command: string,
  env: Readonly<Record<string, string>>,
  options: SandboxOptions,
): SpawnSpec {
  const extra: Array<{ fd: number } | { text: string }> = [];
  const data = (text: string): string => String(3 + extra.push({ text }) - 1);
  const limits = applyLimits(options.limits, features.userns);
  const gitFd = openGitEntry(workspace);
  const args = [
    ...hardeningArgs(features, options.network),
    ...systemViewArgs(),
    ...etcArgs(options.network),
    ...etcData(options.network).flatMap((f) => ['--ro-bind-data', data(f.text), f.path]),
    '--proc',
    '/proc', // a fresh /proc of the new PID namespace
    ...procMaskArgs(),
    '--dev',
    '/dev',
    ...(features.size ? ['--size', String(options.limits.bashTmpMb * MIB)] : []),
    '--tmpfs',
    '/tmp',
    ...(features.size ? ['--size', String(Math.min(SHM_MB, options.limits.bashTmpMb) * MIB)] : []),
    '--tmpfs',
    '/dev/shm',
    // after /tmp (they may live under it), before the workspace and the hidden directories: those win
    ...(options.readOnly ?? []).flatMap((dir) => ['--ro-bind', dir, dir]),
    '--bind',
    workspace,
    workspace, // after /tmp: the workspace may live under it
    ...options.hide
      .filter((h) => isInside(workspace, h) && h !== workspace)
      .flatMap((h) => hideArgs(workspace, h, features.size)),
    ...(gitFd === undefined
      ? []
      : ['--ro-bind-fd', String(3 + extra.push({ fd: gitFd }) - 1), path.join(workspace, '.git')]),
    '--remount-ro',
    '/dev',
    '--remount-ro',
    '/', // the sandbox's own root: writable, and unbounded, otherwise
    '--clearenv',
    ...Object.entries({ ...env, HOME: homeInside(env, workspace) }).flatMap(([key, value]) => ['--setenv', key, value]),
    '--chdir',
    workspace,
    'bash',
    ...launcherArgs(command, limits.launcher),
  ];
  // bwrap's own environment is readable inside as /proc/1/environ: only PATH, never the key.
  const spawnEnv = { PATH: env['PATH'] ?? '/usr/bin:/bin' };
  const cgroup = limits.cgroup;
  const release = (): void => {
    if (gitFd !== undefined) closeSync(gitFd);
    cgroup?.remove();
  };
  // the PID namespace holds every process (killed with it); the cgroup, when there is one, counts them
  const killRest = (): void => cgroup?.killAll();
  if (cgroup === undefined)
    return { file: features.file, args, env: spawnEnv, extra, diesWithParent: true, killRest, release };
  // the first process joins the cgroup, then becomes bwrap: everything it starts is counted
  return {
    file: 'sh',
    args: ['-c', 'echo $$ > "$0" || exit 125; exec "$@"', cgroup.procs, features.file, ...args],
    env: spawnEnv,
    extra,
    diesWithParent: true,
    killRest,
    release,
  };
}

/** HOME inside: the one given when the sandbox shows it (inside the workspace), else the private /tmp. */
function homeInside(env: Readonly<Record<string, string>>, workspace: string): string {
  const home = env['HOME'];
  return home !== undefined && isInside(workspace, home) ? home : '/tmp';
}
