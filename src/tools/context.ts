import type { WorkspaceJail } from './jail.ts';
import type { ToolLimits } from './limits.ts';
import type { SandboxKind, SandboxOptions } from './sandbox-types.ts';
import type { SeenVersions } from './versions.ts';

/** What every tool implementation receives besides its parsed input. */
export interface ToolContext {
  readonly jail: WorkspaceJail;
  readonly limits: ToolLimits;
  readonly signal: AbortSignal | undefined;
  /** Environment for bash (never the host's whole environment: it holds API keys). */
  readonly bashEnv: Readonly<Record<string, string>>;
  /** Where bash runs (resolved once per executor). */
  readonly sandbox: SandboxKind;
  /** What bash's sandbox is built from: network, hidden directories, limits. */
  readonly sandboxOptions: SandboxOptions;
  /** Files this fork has read or written, and their versions then (edit conflicts). */
  readonly seen: SeenVersions;
}
