import type Anthropic from '@anthropic-ai/sdk';
import type { ForkState, LoopSettings } from './fork-state.ts';
import { targetPath, writtenPath } from './messages.ts';
import { type LoopToolResult, runTool, type ToolRunOptions } from './run-tool.ts';
import type { TranscriptSink } from './transcript-sink.ts';

type Block = Anthropic.ContentBlockParam;

/** The loop's options that a turn's tool calls read (a `ForkLoopOptions` is one). */
interface ToolCallOptions extends ToolRunOptions {
  child: { readonly tailBlocks: readonly Block[] };
  transcript?: TranscriptSink | undefined;
}

/** The answer to a tool call cut off by `max_tokens` (its input may be incomplete): it is not run. */
export const CUT_OFF_RESULT: LoopToolResult = {
  isError: true,
  code: 'TOOL_INPUT_INVALID',
  content: 'This tool call was cut off by max_tokens; send it again, shorter.',
};

/**
 * Run the tool calls of the turn that made `message`, one after another, and add their
 * results to the fork's conversation as one user turn. The last call of a turn stopped at
 * `max_tokens` is answered `CUT_OFF_RESULT` instead of run. Each call is in the transcript
 * before it starts and after it ends, so one interrupted is known on resume.
 */
export async function runToolCalls(
  options: ToolCallOptions,
  loop: LoopSettings,
  state: ForkState,
  message: Anthropic.Message,
  uses: readonly Anthropic.ToolUseBlock[],
): Promise<void> {
  const { turn } = state;
  const results: Block[] = [];
  for (const use of uses) {
    options.signal?.throwIfAborted();
    options.transcript?.toolStart({ turn, id: use.id, name: use.name, input: use.input });
    const result: LoopToolResult =
      message.stop_reason === 'max_tokens' && use === uses.at(-1)
        ? CUT_OFF_RESULT
        : await runTool(options, use, [{ role: 'user', content: [...options.child.tailBlocks] }, ...state.own], turn);
    const path = recordToolCall(state, use, result);
    options.transcript?.toolEnd({ turn, id: use.id, isError: result.isError, content: result.content });
    loop.emit({
      type: 'tool-call',
      turn,
      at: loop.clock.now(),
      name: use.name,
      id: use.id,
      isError: result.isError,
      code: result.isError ? result.code : undefined,
      path,
    });
    results.push({
      type: 'tool_result',
      tool_use_id: use.id,
      content: result.content,
      ...(result.isError ? { is_error: true } : {}),
    });
  }
  state.own.push({ role: 'user', content: results });
}

/**
 * Count one tool call and keep what it did to files: a successful write or edit is a changed
 * file; a failed one is an edit not applied until a later one of the same file succeeds.
 * Returns the path written, if any.
 */
export function recordToolCall(
  state: ForkState,
  use: Anthropic.ToolUseBlock,
  result: LoopToolResult,
): string | undefined {
  state.toolCalls += 1;
  const path = writtenPath(use, result.isError);
  if (path) state.filesChanged.add(path);
  const target = targetPath(use);
  if (target !== undefined) {
    if (result.isError) state.notApplied.set(target, result.code);
    else state.notApplied.delete(target);
  }
  return path;
}
