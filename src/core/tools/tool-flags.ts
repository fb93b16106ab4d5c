import type { ZodType } from 'zod';

/**
 * The engine's boolean options that the forks' tools read in the worker. One declaration here
 * and every shape on their way is derived from it: the engine's options, their schema and
 * their resolved form (`engine/options.ts`), `DispatchSettings`, the worker's task
 * (`ForkTask.tools.flags`), the executor's options and every tool's context (`ToolContext.flags`),
 * the distributed job (`ForkJobData.tools`, where the rule list must give each its host rule
 * before anything compiles), and the manifest, so that a resume keeps them.
 *
 * Each is off by default: a manifest of an older run, or a job of an older submitter, that
 * does not have one means off. CONTRIBUTING.md, "Adding an engine setting".
 */
export interface ToolFlags {
  /** Let sandboxed commands reach the network (default false: bubblewrap gives them an empty one). */
  network: boolean;
}

export type ToolFlagName = keyof ToolFlags;

/** The flags as options (`ForkEngineOptions`, `createToolExecutor`): an absent one is off. */
export type ToolFlagOptions = { readonly [K in keyof ToolFlags]?: boolean | undefined };

/**
 * What turning each flag on lets a fork do, in the words a host's operator reads (its
 * policy line, its refusals). The type holds it to one entry per flag.
 */
export const TOOL_FLAGS: { readonly [K in ToolFlagName]: string } = {
  network: 'sandboxed commands may reach the network',
};

export const TOOL_FLAG_NAMES = Object.keys(TOOL_FLAGS) as readonly ToolFlagName[];

/** Every flag, on only where `from` holds `true` (absent, undefined or anything else: off). */
export function toolFlagsOf(from: Readonly<Partial<Record<ToolFlagName, unknown>>>): ToolFlags {
  return Object.fromEntries(TOOL_FLAG_NAMES.map((name) => [name, from[name] === true])) as unknown as ToolFlags;
}

/**
 * Only the flags turned on, as a distributed job carries them: a job that turns none on is
 * the job an older submitter sent, and an older host (which refuses a field it has no rule
 * for) still runs every job that does not ask for a flag it does not know.
 */
export function toolFlagsOn(flags: ToolFlags): { [K in ToolFlagName]?: true } {
  return Object.fromEntries(TOOL_FLAG_NAMES.filter((name) => flags[name]).map((name) => [name, true]));
}

/** One schema field per flag, for the schemas that take them (the engine's options, the executor's, the manifest). */
export function toolFlagShape<S extends ZodType>(field: (name: ToolFlagName) => S): { [K in ToolFlagName]: S } {
  return Object.fromEntries(TOOL_FLAG_NAMES.map((name) => [name, field(name)])) as { [K in ToolFlagName]: S };
}
