import { readFileSync } from 'node:fs';
import type { LauncherLimits } from './launcher.ts';
import type { ToolLimits } from '../limits.ts';
import { createPidsCgroup, type PidsCgroup } from './pids-cgroup.ts';

/** How one command's limits are applied: the launcher's `ulimit`s, and a pids cgroup where needed. */
interface AppliedLimits {
  readonly launcher: LauncherLimits;
  readonly cgroup: PidsCgroup | undefined;
  /** Limits that could not be applied here, and why (printed by the run, see sandbox.ts). */
  readonly missing: readonly string[];
  /** What is applied, for the run's sandbox line. */
  readonly applied: readonly string[];
}

/** Our hard limit of a resource (from /proc/self/limits), in its own units; Infinity when unlimited. */
function hardLimit(name: string): number {
  try {
    const line = readFileSync('/proc/self/limits', 'utf8')
      .split('\n')
      .find((l) => l.startsWith(name));
    const hard = line?.slice(name.length).trim().split(/\s+/)[1];
    return hard === undefined || hard === 'unlimited' ? Infinity : Number(hard);
  } catch {
    return Infinity;
  }
}

/** A value no larger than our own hard limit (a process can lower its limits, never raise them). */
function within(requested: number, name: string, unit: number): number {
  return Math.min(requested, Math.floor(hardLimit(name) / unit));
}

/**
 * The limits of one sandboxed command. Memory and file size are `ulimit`s set by the launcher
 * inside the sandbox. Processes: RLIMIT_NPROC binds only a non-root user in its own user
 * namespace (there it counts the sandbox's tasks alone); the kernel never applies it to uid 0,
 * so root gets a pids cgroup instead (pids-cgroup.ts), or, where none can be made, no process
 * limit, said in `missing`. `probe`: only find out what would apply (the cgroup is removed).
 */
export function applyLimits(limits: ToolLimits, userns: boolean, probe = false): AppliedLimits {
  const launcher: { dataKb: number; fileKb: number; processes?: number } = {
    dataKb: within(limits.bashMaxMemoryMb * 1024, 'Max data size', 1024),
    fileKb: within(limits.bashMaxFileMb * 1024, 'Max file size', 1024),
  };
  const applied = [
    `${Math.round(launcher.dataKb / 1024)} MiB memory per process`,
    `${Math.round(launcher.fileKb / 1024)} MiB per file`,
  ];
  const missing: string[] = [];
  let cgroup: PidsCgroup | undefined;
  const root = (process.getuid?.() ?? 0) === 0;
  if (!root && userns) {
    launcher.processes = within(limits.bashMaxProcesses, 'Max processes', 1);
    applied.push(`${launcher.processes} processes`);
  } else {
    const made = createPidsCgroup(limits.bashMaxProcesses);
    if ('procs' in made) {
      if (probe) made.remove();
      else cgroup = made;
      applied.push(`${limits.bashMaxProcesses} processes (pids cgroup)`);
    } else {
      missing.push(
        `process limit (${root ? 'the kernel does not apply RLIMIT_NPROC to root' : 'RLIMIT_NPROC would count all your processes without a user namespace'}, and no pids cgroup: ${made.missing})`,
      );
    }
  }
  return { launcher, cgroup, missing, applied };
}
