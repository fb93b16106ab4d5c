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

/*
 * `$1`: the command's process group; `$2`: its cgroup's `cgroup.procs`, or empty. Every
 * process listed there is killed, again until none is left (bounded), with shell builtins
 * only: the watchdog starts no process while it kills.
 */
const WATCHDOG = [
  'read _',
  'kill -s KILL -- "-$1" 2>/dev/null',
  '[ -n "$2" ] || exit 0',
  'i=0',
  'while [ $i -lt 1000 ]; do',
  '  n=0',
  '  while read -r p; do kill -s KILL "$p" 2>/dev/null; n=1; done < "$2" || break',
  '  [ $n = 0 ] && break',
  '  i=$((i + 1))',
  'done',
  'rmdir "${2%/*}" 2>/dev/null',
].join('\n');

/**
 * A watchdog for the parent's death (kill -9 of forkcache, a crash): a tiny detached shell that
 * kills the command's process group, and every process of its cgroup (`procs`), once this
 * process is gone. Without it an orphaned command
 * keeps writing to the workspace after the run (and during `resume`).
 *
 * It learns of the death from a pipe, not by polling a pid: its stdin is a pipe whose only
 * writer is this process (close-on-exec, so no other child holds it), and `read` returns at end
 * of file the moment the kernel closes that end, however forkcache ends. Polling `kill -0 PID`
 * every 0.2 s cost two processes per tick and could be fooled by a recycled pid. Call it before
 * the command is released (launcher.ts): then no moment exists where the command runs unwatched.
 *
 * Returns a function that ends the watchdog when the command ends on its own; `undefined` when
 * the watchdog could not be started (the caller must not start the command then).
 */
export function watchParentDeath(child: ChildProcess, procs?: string): (() => void) | undefined {
  if (child.pid === undefined || process.platform === 'win32') return () => {};
  const dog = spawn('sh', ['-c', WATCHDOG, 'forkcache-watchdog', String(child.pid), procs ?? ''], {
    detached: true,
    stdio: ['pipe', 'ignore', 'ignore'],
    env: { PATH: '/usr/bin:/bin' },
  });
  dog.on('error', () => undefined); // reported through the missing pid below
  if (dog.pid === undefined) return undefined;
  const pid = dog.pid;
  dog.unref();
  // never written to: the pipe must only keep its write end open, not the event loop alive
  (dog.stdin as unknown as { unref?: () => void } | null)?.unref?.();
  // our end is closed only once the watchdog is dead: closed earlier, it would fire
  dog.on('exit', () => dog.stdin?.destroy());
  return () => kill(pid); // a single process: `read` and `kill` are shell builtins
}
