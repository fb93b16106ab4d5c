import { existsSync } from 'node:fs';
import type Anthropic from '@anthropic-ai/sdk';
import type { RequestRecord } from '../loop/types.ts';
import { readJsonl } from '../run-dir/jsonl.ts';
import type { TranscriptRecord } from './transcript.ts';

export interface TranscriptTool {
  id: string;
  name: string;
  /** Undefined: the tool started and never finished (the process stopped while it ran). */
  result: { isError: boolean; content: string } | undefined;
}

export interface TranscriptTurn {
  turn: number;
  assistant: Anthropic.MessageParam;
  request: RequestRecord;
  tools: TranscriptTool[];
}

export interface ReadTranscript {
  forkId: string | undefined;
  prefixSha256: string | undefined;
  directive: string | undefined;
  turns: TranscriptTurn[];
  end: Extract<TranscriptRecord, { type: 'end' }> | undefined;
}

/**
 * Read a fork's JSONL transcript (none yet: no turns). A last line cut short by a crash is
 * ignored, any other malformed line is an error naming the file and line: the rule of
 * `readJsonl`, which the report follows too.
 */
export function readTranscript(path: string): ReadTranscript {
  const out: ReadTranscript = { forkId: undefined, prefixSha256: undefined, directive: undefined, turns: [], end: undefined };
  if (!existsSync(path)) return out;
  for (const { value } of readJsonl(path, 'transcript')) {
    const record = value as TranscriptRecord;
    switch (record.type) {
      case 'start':
        out.forkId = record.forkId;
        out.prefixSha256 = record.prefixSha256;
        out.directive = record.directive;
        break;
      case 'turn':
        out.turns.push({ turn: record.turn, assistant: record.assistant as Anthropic.MessageParam, request: record.request as RequestRecord, tools: [] });
        break;
      case 'tool-start':
        out.turns.at(-1)?.tools.push({ id: record.id, name: record.name, result: undefined });
        break;
      case 'tool-end': {
        const tool = out.turns.at(-1)?.tools.find((t) => t.id === record.id);
        if (tool) tool.result = { isError: record.isError, content: record.content };
        break;
      }
      case 'end':
        out.end = record;
        break;
      default:
        break; // newer record kinds: not needed to resume
    }
  }
  return out;
}

/** What the model is told about a tool call that was running when the process stopped. */
export const INTERRUPTED_TOOL_MESSAGE =
  'This tool call was interrupted: the run stopped while it was executing, so its effect is unknown (it may have completed, partly or not at all). Check the current state before you repeat it.';
export const NOT_STARTED_TOOL_MESSAGE = 'This tool call did not run: the run stopped before it started. Run it again if it is still needed.';

/**
 * Rebuild a fork's own messages from its transcript, to continue from its last complete turn.
 * Every tool call of the last assistant turn gets a result: the recorded one, or an error
 * saying it was interrupted (started, effect unknown) or never started. Nothing is re-executed
 * behind the model's back.
 */
export function resumeMessages(transcript: ReadTranscript): { messages: Anthropic.MessageParam[]; turnsDone: number; interrupted: string[] } {
  const messages: Anthropic.MessageParam[] = [];
  const interrupted: string[] = [];
  for (const turn of transcript.turns) {
    messages.push(turn.assistant);
    const uses = (Array.isArray(turn.assistant.content) ? turn.assistant.content : []).filter((b): b is Anthropic.ToolUseBlockParam => b.type === 'tool_use');
    if (uses.length === 0) continue;
    const results: Anthropic.ToolResultBlockParam[] = uses.map((use) => {
      const recorded = turn.tools.find((t) => t.id === use.id);
      if (recorded?.result) return { type: 'tool_result', tool_use_id: use.id, content: recorded.result.content, ...(recorded.result.isError ? { is_error: true } : {}) };
      if (recorded) interrupted.push(use.id);
      return { type: 'tool_result', tool_use_id: use.id, content: recorded ? INTERRUPTED_TOOL_MESSAGE : NOT_STARTED_TOOL_MESSAGE, is_error: true };
    });
    messages.push({ role: 'user', content: results });
  }
  return { messages, turnsDone: transcript.turns.length, interrupted };
}
