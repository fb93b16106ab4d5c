import { existsSync } from 'node:fs';
import { ForkcacheError } from '../../util/errors.ts';
import { probeBubblewrap } from './bwrap-probe.ts';
import { bwrapSpawnSpec } from './bwrap-spec.ts';
import { launcherArgs } from './launcher.ts';
import { createPidsCgroup } from './pids-cgroup.ts';
import { pidNamespace } from './pid-namespace.ts';
import type { SandboxChoice, SandboxKind, SandboxOptions, SpawnSpec } from './types.ts';

/** The sandbox `choice` resolves to on this machine. */
export function resolveSandbox(choice: SandboxChoice): SandboxKind {
  if (choice === 'none') return 'none';
  const found = probeBubblewrap();
  if ('file' in found) return 'bwrap';
  if (choice === 'bwrap') {
    throw new ForkcacheError(
      'TOOL_CONFIG_INVALID',
      `sandbox: "bwrap" was asked for, but ${found.missing} (Debian: apt-get install bubblewrap)`,
      { data: { field: 'sandbox' } },
    );
  }
  return 'none';
}

/** How to spawn `command` in `workspace` with `env`, in the sandbox `kind`. */
export function spawnSpec(
  kind: SandboxKind,
  jail: { readonly root: string },
  command: string,
  env: Readonly<Record<string, string>>,
  options: SandboxOptions,
): SpawnSpec {
  const found = kind === 'bwrap' ? probeBubblewrap() : undefined;
  if (found !== undefined && 'file' in found) {
    const hide = options.hide.filter((dir) => existsSync(dir));
    let released = false;
    const spec = bwrapSpawnSpec(found, jail.root, command, env, { ...options, hide });
    return {
      ...spec,
      release: () => {
        if (!released) spec.release();
        released = true;
      },
    };
  }
  return plainSpawnSpec(command, env);
}

/**
 * No sandbox: bash through the launcher, in a pids cgroup of its own where one can be made
 * (as root: pids-cgroup.ts), else in a PID namespace of its own (pid-namespace.ts), so a
 * command's `(setsid sleep 1000 &)`, which leaves both its process group and forkcache's
 * process tree, is still found and killed when the call ends.
 */
function plainSpawnSpec(command: string, env: Readonly<Record<string, string>>): SpawnSpec {
  const cgroup = createPidsCgroup('max');
  if ('missing' in cgroup) {
    const ns = pidNamespace();
    // `unshare` is the process forkcache and its watchdog kill; its child, the namespace's
    // first process, dies with it (`--kill-child`), and the kernel kills the namespace then
    const [file, args] = 'file' in ns ? [ns.file, [...ns.args, 'bash']] : ['bash', []];
    return {
      file,
      args: [...args, ...launcherArgs(command)],
      env: { ...env },
      extra: [],
      diesWithParent: false,
      killRest: () => {},
      release: () => {},
    };
  }
  let released = false;
  return {
    // the first process joins the cgroup, then becomes the launcher: everything it starts is in it
    file: 'sh',
    args: ['-c', 'echo $$ > "$0" || exit 125; exec "$@"', cgroup.procs, 'bash', ...launcherArgs(command)],
    env: { ...env },
    extra: [],
    diesWithParent: false,
    procs: cgroup.procs,
    killRest: () => cgroup.killAll(),
    release: () => {
      if (released) return;
      released = true;
      cgroup.killAll();
      cgroup.remove();
    },
  };
}

/** How a `sandbox: none` command's stragglers are contained here, or why they may outlive its call. */
export function plainContainment(): { applied: string } | { missing: string } {
  const cgroup = createPidsCgroup('max');
  if (!('missing' in cgroup)) {
    cgroup.remove();
    return { applied: 'pids cgroup' };
  }
  const ns = pidNamespace();
  if ('file' in ns) return { applied: 'own PID namespace' };
  return { missing: `no pids cgroup: ${cgroup.missing}; ${ns.missing}` };
}

/** Why processes a `sandbox: none` command starts may outlive its call here, or undefined when none can. */
export function plainEscapeRisk(): string | undefined {
  const found = plainContainment();
  return 'missing' in found ? found.missing : undefined;
}
