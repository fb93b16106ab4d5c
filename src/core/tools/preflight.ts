import { ForkcacheError } from '../util/errors.ts';
import { declaredName, refusalOf, resolveToolSet, type DeclaredTool } from './client-tools/registry.ts';
import type { ToolSetChoice, ToolSetName } from './client-tools/types.ts';

/** What becomes of each tool of the parent's array in its forks. */
interface ToolClassification {
  /** The tool set chosen for the parent (from its array, or as asked). */
  readonly toolSet: ToolSetName;
  /** Run by an embedder's handler on the main thread (these win over any other meaning of the name). */
  readonly host: readonly string[];
  /** Run by forkcache's executors (its own tools, or the client's mapped onto them). */
  readonly run: readonly string[];
  /** The spawn tool: refused inside a fork by the recursion guard. */
  readonly spawn: readonly string[];
  /** Refused in forks on purpose: the set's (ScheduleWakeup, Skill...) and the caller's `deny`. */
  readonly refused: readonly string[];
  /** Nothing runs them: a run with any is refused before anything is sent. */
  readonly unrunnable: readonly string[];
}

interface ClassifyOptions {
  /** Names an embedder's host handlers serve. */
  readonly hostToolNames: readonly string[];
  /** Tools refused in forks on purpose (`denyTools`): the model is told, the run goes on. */
  readonly deny: readonly string[];
  readonly toolSet?: ToolSetChoice | undefined;
}

/**
 * Sort every tool of the parent's array by who answers a fork's call to it, in the order the
 * executor dispatches: a host handler, then the tool set's executors, then the spawn tool, then
 * the refusals; what is left is unrunnable.
 *
 * @example
 * classifyParentTools(snapshot.tools, { hostToolNames: [], deny: [] }).unrunnable // ['search_tickets']
 */
export function classifyParentTools(tools: readonly DeclaredTool[], options: ClassifyOptions): ToolClassification {
  const set = resolveToolSet(options.toolSet, tools);
  const host = new Set(options.hostToolNames);
  const deny = new Set(options.deny);
  const out = {
    host: [] as string[],
    run: [] as string[],
    spawn: [] as string[],
    refused: [] as string[],
    unrunnable: [] as string[],
  };
  for (const tool of tools) {
    const name = declaredName(tool);
    if (host.has(name)) out.host.push(name);
    else if (deny.has(name)) out.refused.push(name);
    else if (set.tools.has(name) || name === set.deferred?.call || name === set.deferred?.search) out.run.push(name);
    else if (set.spawn.includes(name)) out.spawn.push(name);
    else if (refusalOf(set, name) !== undefined) out.refused.push(name);
    else out.unrunnable.push(name);
  }
  return { toolSet: set.name, ...out };
}

/** The one line naming tools no executor runs. */
function unrunnableLine(names: readonly string[]): string {
  const list = names.length <= 2 ? names.join(' and ') : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
  return names.length === 1
    ? `the parent declares ${list}, which no executor runs: pass a handler, or deny it`
    : `the parent declares ${list}, which no executor runs: pass handlers, or deny them`;
}

/**
 * Preflight: classify, and refuse (TOOLS_UNRUNNABLE, naming every such tool) a parent whose
 * forks would meet "unknown tool". Called before anything is sent.
 */
export function preflightTools(tools: readonly DeclaredTool[], options: ClassifyOptions): ToolClassification {
  const classified = classifyParentTools(tools, options);
  if (classified.unrunnable.length > 0)
    throw new ForkcacheError('TOOLS_UNRUNNABLE', unrunnableLine(classified.unrunnable), {
      data: { tools: [...classified.unrunnable], toolSet: classified.toolSet },
    });
  return classified;
}
