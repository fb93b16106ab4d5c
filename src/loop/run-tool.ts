import type Anthropic from '@anthropic-ai/sdk';
import { FORK_QUERY_SOURCE, SPAWN_TOOL_NAME } from '../wire/fork-text.ts';
import { assertMaySpawn } from '../fork/guard.ts';
import type { ToolExecutor } from '../tools/executor.ts';

/** What runTool needs of the loop's options. */
export interface ToolRunOptions {
  tools: ToolExecutor;
  querySource?: string | undefined;
  signal?: AbortSignal | undefined;
  permit?:
    | ((call: { id: string; name: string; input: unknown }) => Promise<{ allow: boolean; reason?: string | undefined }>)
    | undefined;
}

export type LoopToolResult = { isError: false; content: string } | { isError: true; code: string; content: string };

/**
 * Run one tool call. The spawn tool is refused inside a fork by the recursion guard, both
 * layers: the task's query source, and the boilerplate tag in the child's own messages.
 */
export async function runTool(
  options: ToolRunOptions,
  use: Anthropic.ToolUseBlock,
  history: Anthropic.MessageParam[],
): Promise<LoopToolResult> {
  if (use.name === SPAWN_TOOL_NAME) {
    try {
      assertMaySpawn({ querySource: options.querySource ?? FORK_QUERY_SOURCE, messages: history });
    } catch (err) {
      return { isError: true, code: 'FORK_RECURSION', content: (err as Error).message };
    }
  }
  if (options.permit && options.tools.isAllowed(use.name)) {
    const answer = await options.permit({ id: use.id, name: use.name, input: use.input });
    if (!answer.allow)
      return {
        isError: true,
        code: 'PERMISSION_DENIED',
        content: `Permission denied for ${use.name}${answer.reason ? `: ${answer.reason}` : ''}. Do without it, or report that it is needed.`,
      };
  }
  return options.tools.execute(use.name, use.input, { signal: options.signal, toolUseId: use.id });
}
