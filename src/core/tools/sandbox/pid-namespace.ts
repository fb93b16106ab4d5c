import { probeProgram } from '../../util/exec-file.ts';
import { findExecutable } from '../find-executable.ts';

/*
 * A PID namespace for `sandbox: none` where no pids cgroup can be made (not root, cgroup v2
 * without delegation): `(setsid sleep N &)` leaves the command's process group and its process
 * tree, but never its PID namespace, and the kernel kills every process of a namespace the
 * moment its first process (the launcher, then the command's bash) ends. `unshare --kill-child`
 * ties that first process to `unshare`, which is what forkcache and its watchdog kill.
 *
 * Not root, a PID namespace needs a user namespace of its own; the user's id is mapped to
 * itself, so files keep their owner and access is as before, but setuid programs (`sudo`) do
 * not gain their owner's rights inside. A fresh /proc (`--mount-proc`) lets `ps` and `pkill`
 * see the namespace's own pids, which are the ones `kill` takes there.
 */

interface PidNamespace {
  /** The `unshare` binary. */
  readonly file: string;
  /** Its arguments before the command. */
  readonly args: readonly string[];
}

function probe(): PidNamespace | { missing: string } {
  const file = findExecutable('unshare', ['/usr/bin', '/bin']);
  if (file === undefined) return { missing: 'no unshare (util-linux) found' };
  const root = (process.getuid?.() ?? 0) === 0;
  const args = [
    ...(root ? [] : ['--user', '--map-current-user']),
    '--pid',
    '--fork',
    '--kill-child',
    '--mount-proc',
    '--',
  ];
  const why = probeProgram(file, [...args, 'true'], { PATH: '/usr/bin:/bin' });
  if (why === undefined) return { file, args };
  return {
    missing: `unshare cannot create a PID namespace here${root ? '' : ' (a user namespace is needed without root)'}: ${why}`,
  };
}

let probed: PidNamespace | { missing: string } | undefined;

/** How to run a command in a PID namespace of its own here, or why it cannot be (probed once per process). */
export function pidNamespace(): PidNamespace | { missing: string } {
  probed ??= probe();
  return probed;
}
