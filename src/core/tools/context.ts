import type { WorkspaceJail } from './jail/jail.ts';
import type { ToolLimits } from './limits.ts';
import type { SandboxKind, SandboxOptions } from './sandbox/types.ts';
import type { SeenVersions } from './files/versions.ts';
import type { ToolFlags } from './tool-flags.ts';

/** What every tool implementation receives besides its parsed input. */
export interface ToolContext {
  readonly jail: WorkspaceJail;
  readonly limits: ToolLimits;
  readonly signal: AbortSignal | undefined;
  /** Environment for bash (never the host's whole environment: it holds API keys). */
  readonly bashEnv: Readonly<Record<string, string>>;
  /** Where bash runs (resolved once per executor). */
  readonly sandbox: SandboxKind;
  /** The engine's tool flags (tool-flags.ts), every one: a tool reads its own here (`ctx.flags.network`). */
  readonly flags: Readonly<ToolFlags>;
  /** What bash's sandbox is built from: network (the flag's), hidden directories, limits. */
  readonly sandboxOptions: SandboxOptions;
  /** Files this fork has read or written, and their versions then (edit conflicts). */
  readonly seen: SeenVersions;
}
