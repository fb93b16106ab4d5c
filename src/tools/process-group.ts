import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** Pids whose parent chain leads to `root` (from /proc; empty where there is no /proc). */
function descendants(root: number): number[] {
  const parents = new Map<number, number>();
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // "pid (comm) state ppid …": comm may hold spaces and parentheses, so cut at the last ')'
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone meanwhile
    }
  }
  const found: number[] = [];
  const walk = (pid: number): void => {
    for (const [child, parent] of parents) {
      if (parent !== pid) continue;
      found.push(child);
      walk(child);
    }
  };
  walk(root);
  return found;
}

function kill(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/**
 * Kill a command started with `detached: true` (its own process group): the group, and every
 * descendant still attached to it by parentage (one that called `setsid` left the group but
 * not the tree). Not a sandbox: a process that double-forked away is out of reach here; the
 * bubblewrap sandbox's PID namespace is what contains those.
 */
export function killTree(child: ChildProcess): void {
  if (child.pid === undefined) return;
  if (process.platform === 'win32') return kill(child.pid);
  // Find the tree first (once the root dies its children are re-parented and out of sight),
  // then kill the group before the stragglers: killing a child first lets its parent run on
  // for a moment (a shell would start its next command).
  const tree = descendants(child.pid);
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // the group is gone
  }
  for (const pid of tree) kill(pid);
}

/**
 * A watchdog for the parent's death (kill -9 of forkcache, a crash): a tiny detached shell that
 * kills the command's process group once this process is gone. Without it an orphaned
 * command keeps writing to the workspace after the run (and during `resume`). Returns a
 * function that ends the watchdog when the command ends on its own.
 */
export function watchParentDeath(child: ChildProcess): () => void {
  if (child.pid === undefined || process.platform === 'win32') return () => {};
  // A killed forkcache stays a zombie until its own parent reaps it, and `kill -0` succeeds on
  // a zombie: state Z in /proc/PID/stat counts as gone.
  const script =
    'while kill -0 "$1" 2>/dev/null && ! grep -q ") Z " "/proc/$1/stat" 2>/dev/null; do sleep 0.2; done; kill -s KILL -- "-$2" 2>/dev/null';
  const dog = spawn('sh', ['-c', script, 'forkcache-watchdog', String(process.pid), String(child.pid)], {
    detached: true,
    stdio: 'ignore',
    env: { PATH: '/usr/bin:/bin' },
  });
  dog.unref();
  return () => {
    if (dog.pid !== undefined) kill(-dog.pid); // its group: the shell and its current `sleep`
  };
}
