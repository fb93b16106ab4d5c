import { existsSync, readFileSync } from 'node:fs';
import type Anthropic from '@anthropic-ai/sdk';
import type { z } from 'zod';
import { ForkcacheError } from '../errors.ts';
import { formatZodIssues } from '../validation.ts';
import type { RequestRecord } from '../loop/types.ts';
import type { TranscriptRecord } from './transcript.ts';
import { anyRecordSchema, transcriptRecordSchemas, type TranscriptRecordType } from './transcript-schema.ts';

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
  /** Attempts that failed after their response began: billed, recorded in the ledger. */
  failedAttempts: RequestRecord[];
  /**
   * Requests written ahead and never answered: in flight when the process died. The endpoint
   * may or may not have billed them; the summary counts them as "unknown outcome".
   */
  unknownOutcome: number;
  end: Extract<TranscriptRecord, { type: 'end' }> | undefined;
}

function invalid(path: string, line: number, message: string, cause?: unknown): ForkcacheError {
  return new ForkcacheError('INVALID_ARGUMENT', `transcript ${path}:${line}: ${message}`, { cause, data: { path, line } });
}

/** Parse one line with its record's schema, or throw naming file:line and the field. */
function parseLine<T extends TranscriptRecordType>(type: T, value: unknown, path: string, line: number): z.output<(typeof transcriptRecordSchemas)[T]> {
  const result = transcriptRecordSchemas[type].safeParse(value);
  if (!result.success) throw invalid(path, line, `${type} record: ${formatZodIssues(result.error.issues)}`);
  return result.data as z.output<(typeof transcriptRecordSchemas)[T]>;
}

/**
 * Read a fork's JSONL transcript. A last line cut short by a crash is ignored (it was never
 * complete); any other malformed line (not JSON, `null`, a record missing a field, a turn
 * repeated or out of order) is an error naming the file and line.
 */
export function readTranscript(path: string): ReadTranscript {
  const out: ReadTranscript = { forkId: undefined, prefixSha256: undefined, directive: undefined, turns: [], failedAttempts: [], unknownOutcome: 0, end: undefined };
  if (!existsSync(path)) return out;
  const lines = readFileSync(path, 'utf8').split('\n');
  const pending = new Set<string>(); // request-start records not answered yet: `turn:attempt`
  lines.forEach((text, i) => {
    const line = i + 1;
    if (text.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (cause) {
      if (i >= lines.length - 2) return; // the torn last write of a killed process
      throw invalid(path, line, 'not JSON', cause);
    }
    const kind = anyRecordSchema.safeParse(value);
    if (!kind.success) throw invalid(path, line, 'expected a JSON object with a "type"');
    const type = kind.data.type;
    if (!(type in transcriptRecordSchemas)) return; // newer record kinds: not needed to resume
    switch (type as TranscriptRecordType) {
      case 'start': {
        const record = parseLine('start', value, path, line);
        out.forkId = record.forkId;
        out.prefixSha256 = record.prefixSha256;
        out.directive = record.directive;
        break;
      }
      case 'request-start': {
        const record = parseLine('request-start', value, path, line);
        pending.add(`${record.turn}:${record.attempt}`);
        break;
      }
      case 'attempt': {
        const record = parseLine('attempt', value, path, line);
        pending.delete(`${record.turn}:${record.attempt}`);
        if (record.status === 'billed' && record.request) out.failedAttempts.push(record.request as unknown as RequestRecord);
        break;
      }
      case 'turn': {
        const record = parseLine('turn', value, path, line);
        const expected = (out.turns.at(-1)?.turn ?? record.turn - 1) + 1;
        if (out.turns.length > 0 && record.turn !== expected) {
          throw invalid(path, line, record.turn < expected ? `turn ${record.turn} is recorded twice` : `turn ${record.turn} follows turn ${expected - 1}: a turn is missing`);
        }
        for (const key of pending) if (key.startsWith(`${record.turn}:`)) pending.delete(key);
        out.turns.push({ turn: record.turn, assistant: record.assistant as Anthropic.MessageParam, request: record.request as unknown as RequestRecord, tools: [] });
        break;
      }
      case 'tool-start': {
        const record = parseLine('tool-start', value, path, line);
        out.turns.at(-1)?.tools.push({ id: record.id, name: record.name, result: undefined });
        break;
      }
      case 'tool-end': {
        const record = parseLine('tool-end', value, path, line);
        const tool = out.turns.at(-1)?.tools.find((t) => t.id === record.id);
        if (tool) tool.result = { isError: record.isError, content: record.content };
        break;
      }
      case 'end':
        out.end = { v: 1, type: 'end', ...parseLine('end', value, path, line) } as ReadTranscript['end'];
        break;
    }
  });
  out.unknownOutcome = pending.size;
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
