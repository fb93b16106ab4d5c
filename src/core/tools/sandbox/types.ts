import type { ToolLimits } from '../limits.ts';

/**
 * Where `bash` runs. `bwrap`: inside bubblewrap (Debian's `bubblewrap` package): its own PID
 * namespace and /proc (forkcache's process and its environment are invisible), no capability,
 * a user namespace where the kernel allows one, no network unless the plan allows it, a
 * read-only view of the system directories and a minimal /etc (no /root, /home, /etc/shadow),
 * the workspace the only writable host path, the run directory hidden, a size-capped /tmp, and
 * limits on processes, memory and file size; killed with its parent. `none`: a plain child in
 * its own process group and, where one can be made, a pids cgroup (what `setsid` or a double
 * fork cannot leave), all of it killed on timeout, abort and, through a watchdog, the parent's
 * death; it runs with the user's rights and can read and change what they can. docs/security.md.
 */
export type SandboxKind = 'bwrap' | 'none';

/** `auto`: bubblewrap when it is installed and works here, otherwise none (and the run says so). */
export type SandboxChoice = 'auto' | SandboxKind;

/** What the sandbox of one executor is built from. */
export interface SandboxOptions {
  /** Let commands reach the network (default false: a network namespace of their own, empty). */
  readonly network: boolean;
  /** Directories hidden from commands even inside the workspace (the run directory, forkcache's state). */
  readonly hide: readonly string[];
  /**
   * Host directories shown read-only at their own path (an integration check's dependency
   * folders: the repository's `node_modules`, `.venv`), so the links to them and a venv's
   * absolute paths resolve inside. Outside a sandbox nothing enforces it.
   */
  readonly readOnly?: readonly string[] | undefined;
  readonly limits: ToolLimits;
}

/** What to spawn for one command. */
export interface SpawnSpec {
  readonly file: string;
  readonly args: string[];
  /** The spawned process's own environment (bwrap's is visible inside as PID 1's: kept minimal). */
  readonly env: Record<string, string>;
  /** The child's descriptors from 3 on: an open fd to hand over, or text bwrap reads through a pipe. */
  readonly extra: ReadonlyArray<{ readonly fd: number } | { readonly text: string }>;
  /** True when the sandbox itself ends the command if forkcache dies (no watchdog needed). */
  readonly diesWithParent: boolean;
  /**
   * The pids cgroup's `cgroup.procs` the command's processes are in, when it has one: the
   * parent-death watchdog kills every process listed there (process-group.ts).
   */
  readonly procs?: string | undefined;
  /** Kill every process the command started, wherever it went (its cgroup); nothing without one. */
  killRest(): void;
  /** Undo what preparing the spawn did (descriptors, the pids cgroup), once the command ended. */
  release(): void;
}
