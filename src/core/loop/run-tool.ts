import type Anthropic from '@anthropic-ai/sdk';
import { FORK_QUERY_SOURCE, SPAWN_TOOL_NAME } from '../wire/fork-text.ts';
import { assertMaySpawn } from '../fork/guard.ts';
import type { ToolExecutor } from '../tools/executor.ts';

/** What runTool needs of the loop's options. */
export interface ToolRunOptions {
  tools: ToolExecutor;
  querySource?: string | undefined;
  signal?: AbortSignal | undefined;
}

export type LoopToolResult = { isError: false; content: string } | { isError: true; code: string; content: string };

/**
 * Run one tool call. The spawn tool (`agent`, or the client's: Claude Code's `Agent`) is
 * refused inside a fork by the recursion guard, both layers: the task's query source, and the
 * boilerplate tag in the child's own messages. Everything else is the executor's gate
 * (src/core/tools/executor.ts): the permission policy among it, in forkcache's capability terms.
 */
export async function runTool(
  options: ToolRunOptions,
  use: Anthropic.ToolUseBlock,
  history: Anthropic.MessageParam[],
  turn: number,
): Promise<LoopToolResult> {
  if (options.tools.isSpawnTool(use.name) || use.name === SPAWN_TOOL_NAME) {
    try {
      assertMaySpawn({ querySource: options.querySource ?? FORK_QUERY_SOURCE, messages: history });
    } catch (err) {
      return { isError: true, code: 'FORK_RECURSION', content: (err as Error).message };
    }
  }
  // the executor is the gate: deny list, permission policy, bounds and redaction, by every route
  return options.tools.execute(use.name, use.input, { signal: options.signal, toolUseId: use.id, turn });
}
