import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { processAlive } from '../path-lock.ts';

/*
 * A pids cgroup per sandboxed command, for the one case RLIMIT_NPROC cannot cover: the kernel
 * never enforces RLIMIT_NPROC on uid 0 (root, as in CI and most containers), user namespace or
 * not, so a fork bomb run as root met no limit (issue 24, route 4: 300 background processes).
 * The cgroup is created as a child of this process's own pids cgroup (its accounting stays
 * where it was), the sandbox joins it before bubblewrap starts, and it is removed when the
 * command ends. Only the pids controller is used: memory stays per process (RLIMIT_DATA).
 */

const PREFIX = 'forkcache-';

/** Our own pids cgroup directory, where children can carry a `pids.max`, or why there is none. */
function findBase(): { dir: string } | { missing: string } {
  let cgroups: string;
  let mounts: string;
  try {
    cgroups = readFileSync('/proc/self/cgroup', 'utf8');
    mounts = readFileSync('/proc/self/mountinfo', 'utf8');
  } catch {
    return { missing: 'no /proc/self/cgroup' };
  }
  const v1 = /^\d+:([^:]*\bpids\b[^:]*):(.*)$/m.exec(cgroups);
  const v2 = /^0::(.*)$/m.exec(cgroups);
  for (const line of mounts.split('\n')) {
    // "id parent major:minor root mountpoint options ... - fstype source superoptions"
    const [left, right] = line.split(' - ');
    if (left === undefined || right === undefined) continue;
    const fields = left.split(' ');
    const [fstype, , superOptions = ''] = right.split(' ');
    const root = fields[3] ?? '';
    const mountPoint = (fields[4] ?? '').replace(/\\040/g, ' ');
    const own =
      fstype === 'cgroup' && v1 && superOptions.split(',').includes('pids')
        ? v1[2]
        : fstype === 'cgroup2' && v2 && !v1
          ? v2[1]
          : undefined;
    if (own === undefined || !(own === root || own.startsWith(root === '/' ? '/' : `${root}/`))) continue;
    const dir = path.join(mountPoint, path.relative(root, own));
    // cgroup v2: children get a pids.max only where pids is enabled below us, which the kernel
    // allows only where we have no sibling processes (the root); checked when one is made
    return { dir };
  }
  return { missing: 'no pids cgroup hierarchy is mounted' };
}

let base: { dir: string } | { missing: string } | undefined;
let sequence = 0;

/** Remove cgroups left by forkcache processes that died before removing theirs. */
function sweep(dir: string): void {
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.startsWith(PREFIX));
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(name.slice(PREFIX.length).split('-')[0]);
    if (Number.isInteger(pid) && pid > 0 && !processAlive(pid)) {
      try {
        rmdirSync(path.join(dir, name));
      } catch {
        // still has processes, or not ours to remove
      }
    }
  }
}

/** A command's cgroup: the file its first process writes its pid to, and its removal. */
export interface PidsCgroup {
  readonly procs: string;
  /** SIGKILL every process in it, again until none is left (a process forking meanwhile joins it). */
  killAll(): void;
  remove(): void;
}

// enough rounds for a process that forks as fast as it is killed to run out of pids.max
const KILL_ROUNDS = 1000;

function killAllIn(procs: string): void {
  for (let round = 0; round < KILL_ROUNDS; round++) {
    let pids: string[];
    try {
      pids = readFileSync(procs, 'utf8').split('\n').filter(Boolean);
    } catch {
      return; // removed
    }
    if (pids.length === 0) return; // a killed task leaves cgroup.procs once it has exited
    for (const pid of pids) {
      try {
        process.kill(Number(pid), 'SIGKILL');
      } catch {
        // gone meanwhile
      }
    }
  }
}

function removeLater(dir: string, attempt: number): void {
  try {
    rmdirSync(dir);
  } catch (err) {
    if ((err as { code?: unknown }).code !== 'EBUSY' || attempt >= 20) return; // the next sweep takes it
    // stragglers: the namespace's last processes are still being reaped
    try {
      for (const pid of readFileSync(path.join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean))
        process.kill(Number(pid), 'SIGKILL');
    } catch {
      // gone meanwhile
    }
    setTimeout(() => removeLater(dir, attempt + 1), 50).unref();
  }
}

/**
 * A new pids cgroup allowing `max` tasks (processes and threads; `'max'`: no limit, only the
 * tracking), or why none can be made here (not root, cgroup v2 without delegation, no cgroup
 * file system). A process cannot leave a cgroup by `setsid` or a double fork, as it leaves a
 * process group or tree: what `killAll` reaches is everything the command started.
 */
export function createPidsCgroup(max: number | 'max'): PidsCgroup | { missing: string } {
  if (base === undefined) {
    base = findBase();
    if ('dir' in base) sweep(base.dir);
  }
  if ('missing' in base) return base;
  const dir = path.join(base.dir, `${PREFIX}${process.pid}-${++sequence}-${Math.random().toString(36).slice(2, 8)}`);
  try {
    mkdirSync(dir);
  } catch (err) {
    return { missing: `cannot create a cgroup in ${base.dir} (${(err as { code?: string }).code ?? 'error'})` };
  }
  if (!existsSync(path.join(dir, 'pids.max'))) {
    removeLater(dir, 20);
    return { missing: `the pids controller is not enabled for children of ${base.dir}` };
  }
  try {
    writeFileSync(path.join(dir, 'pids.max'), String(max));
  } catch (err) {
    removeLater(dir, 20);
    return { missing: `cannot set pids.max (${(err as { code?: string }).code ?? 'error'})` };
  }
  const procs = path.join(dir, 'cgroup.procs');
  return { procs, killAll: () => killAllIn(procs), remove: () => removeLater(dir, 0) };
}
