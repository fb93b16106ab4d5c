import { ForkcacheError } from '../util/errors.ts';
import type { ParentSnapshot } from '../fork/snapshot.ts';
import type { ForkTools } from '../pool/fork-dispatch.ts';
import { TOOL_SETS } from '../tools/client-tools/registry.ts';
import type { ToolSetChoice } from '../tools/client-tools/types.ts';
import { preflightTools } from '../tools/preflight.ts';

/** The texts a client states its working directory in: the system prompt and the first user turn. */
function statedTexts(snapshot: ParentSnapshot): string[] {
  const system = snapshot.system;
  const texts = typeof system === 'string' ? [system] : (system ?? []).map((b) => b.text);
  const first = snapshot.messages.find((m) => m.role === 'user');
  if (first) {
    if (typeof first.content === 'string') texts.push(first.content);
    else for (const block of first.content) if (block.type === 'text') texts.push(block.text);
  }
  return texts;
}

/**
 * Preflight of a fan-out: every tool of the parent's array is run, refused on purpose or
 * named (TOOLS_UNRUNNABLE), before anything is sent; then whose tools the forks run, and the
 * directory the client's absolute paths are written in.
 */
export function forkToolsFor(
  snapshot: ParentSnapshot,
  options: {
    toolSet: ToolSetChoice;
    denyTools: readonly string[];
    hostToolNames?: readonly string[];
    /** The forks run on `forkcache worker` hosts, which run forkcache's own tool set only. */
    remote?: boolean;
  },
): ForkTools {
  const classified = preflightTools(snapshot.tools ?? [], {
    hostToolNames: options.hostToolNames ?? [],
    deny: options.denyTools,
    toolSet: options.toolSet,
  });
  const set = TOOL_SETS[classified.toolSet];
  if (options.remote && set.name !== 'forkcache')
    // said before anything is sent: a host would answer each of the client's calls "unknown tool"
    throw new ForkcacheError(
      'TOOLS_UNRUNNABLE',
      `the parent declares ${set.name}'s tools, which forkcache worker hosts do not run yet: run this fan-out on one machine (without --redis)`,
      { data: { toolSet: set.name } },
    );
  return { toolSet: set.name, clientRoot: set.clientRoot(statedTexts(snapshot)), deny: [...options.denyTools] };
}
