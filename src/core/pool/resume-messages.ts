import type Anthropic from '@anthropic-ai/sdk';
import type { ReadTranscript } from '../run-dir/transcript-reader.ts';
import { READ_ONLY_CLIENT_TOOL_NAMES } from '../tools/client-tools/registry.ts';

// The reader lives with the run directory's other formats; resume works from what it returns.

/** What the model is told about a tool call that was running when the process stopped. */
export const INTERRUPTED_TOOL_MESSAGE =
  'This tool call was interrupted: the run stopped while it was executing, so its effect is unknown (it may have completed, partly or not at all). Check the current state before you repeat it.';
export const NOT_STARTED_TOOL_MESSAGE =
  'This tool call did not run: the run stopped before it started. Run it again if it is still needed.';
/**
 * An interrupted read-only call: re-run by the worker on resume, its result replacing this
 * text; a host that cannot re-run it leaves the model this (true) account instead.
 */
export const READ_ONLY_INTERRUPTED_MESSAGE =
  'This tool call was interrupted when the run stopped; it only reads, so nothing was changed. Run it again if you still need its result.';

/** Whether a host tool only reads; undefined for a name that is not a host tool's. */
export type ReadOnlyOf = (name: string) => boolean | undefined;

/** A read-only tool call that was running when the run stopped: run again on resume. */
export interface RerunCall {
  readonly turn: number;
  readonly id: string;
  readonly name: string;
  readonly input: unknown;
}

// forkcache's read-only tools and the clients' (Claude Code's Read, Qwen Code's read_file...)
const READ_ONLY: ReadonlySet<string> = READ_ONLY_CLIENT_TOOL_NAMES;

/**
 * Rebuild a fork's own messages from its transcript, to continue from its last complete turn.
 * Every tool call of the last assistant turn gets a result: the recorded one, or an error
 * saying it was interrupted (started, effect unknown) or never started. A call with effects is
 * never re-executed behind the model's back; an interrupted read-only one (read_file, grep,
 * glob, list_dir, a host tool declared `readOnly`) is listed in `rerun`: the worker runs it
 * again and puts its real result in.
 */
export function resumeMessages(
  transcript: ReadTranscript,
  /** For a host tool's name, whether it is declared `readOnly` (it wins over a built-in of that name); else undefined. */
  hostReadOnly: ReadOnlyOf = () => undefined,
): {
  messages: Anthropic.MessageParam[];
  turnsDone: number;
  interrupted: string[];
  rerun: RerunCall[];
} {
  const messages: Anthropic.MessageParam[] = [];
  const interrupted: string[] = [];
  const rerun: RerunCall[] = [];
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
      const rerunnable = recorded !== undefined && (hostReadOnly(recorded.name) ?? READ_ONLY.has(recorded.name));
      if (rerunnable)
        rerun.push({ turn: turn.turn, id: use.id, name: recorded.name, input: recorded.input ?? use.input });
      else if (recorded) interrupted.push(use.id);
      return {
        type: 'tool_result',
        tool_use_id: use.id,
        content: rerunnable
          ? READ_ONLY_INTERRUPTED_MESSAGE
          : recorded
            ? INTERRUPTED_TOOL_MESSAGE
            : NOT_STARTED_TOOL_MESSAGE,
        is_error: true,
      };
    });
    messages.push({ role: 'user', content: results });
  }
  // only the last turn's calls can still be waiting: earlier ones were answered before it
  const last = transcript.turns.at(-1)?.turn;
  return { messages, turnsDone: transcript.turns.length, interrupted, rerun: rerun.filter((r) => r.turn === last) };
}
