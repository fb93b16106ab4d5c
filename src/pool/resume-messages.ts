import type Anthropic from '@anthropic-ai/sdk';
import type { ReadTranscript } from '../run-dir/transcript-reader.ts';

// The reader lives with the run directory's other formats; resume works from what it returns.
export { readTranscript } from '../run-dir/transcript-reader.ts';
export type { ReadTranscript, TranscriptTool, TranscriptTurn } from '../run-dir/transcript-reader.ts';

/** What the model is told about a tool call that was running when the process stopped. */
export const INTERRUPTED_TOOL_MESSAGE =
  'This tool call was interrupted: the run stopped while it was executing, so its effect is unknown (it may have completed, partly or not at all). Check the current state before you repeat it.';
export const NOT_STARTED_TOOL_MESSAGE =
  'This tool call did not run: the run stopped before it started. Run it again if it is still needed.';

/**
 * Rebuild a fork's own messages from its transcript, to continue from its last complete turn.
 * Every tool call of the last assistant turn gets a result: the recorded one, or an error
 * saying it was interrupted (started, effect unknown) or never started. Nothing is re-executed
 * behind the model's back.
 */
export function resumeMessages(transcript: ReadTranscript): {
  messages: Anthropic.MessageParam[];
  turnsDone: number;
  interrupted: string[];
} {
  const messages: Anthropic.MessageParam[] = [];
  const interrupted: string[] = [];
  for (const turn of transcript.turns) {
    messages.push(turn.assistant);
    const uses = (Array.isArray(turn.assistant.content) ? turn.assistant.content : []).filter(
      (b): b is Anthropic.ToolUseBlockParam => b.type === 'tool_use',
    );
    if (uses.length === 0) {
      // a continuation, a failed check's output or a retry the loop added after a final answer
      if (turn.prompt) messages.push({ role: 'user', content: [{ type: 'text', text: turn.prompt.text }] });
      continue;
    }
    const results: Anthropic.ToolResultBlockParam[] = uses.map((use) => {
      const recorded = turn.tools.find((t) => t.id === use.id);
      if (recorded?.result)
        return {
          type: 'tool_result',
          tool_use_id: use.id,
          content: recorded.result.content,
          ...(recorded.result.isError ? { is_error: true } : {}),
        };
      if (recorded) interrupted.push(use.id);
      return {
        type: 'tool_result',
        tool_use_id: use.id,
        content: recorded ? INTERRUPTED_TOOL_MESSAGE : NOT_STARTED_TOOL_MESSAGE,
        is_error: true,
      };
    });
    messages.push({ role: 'user', content: results });
  }
  return { messages, turnsDone: transcript.turns.length, interrupted };
}
