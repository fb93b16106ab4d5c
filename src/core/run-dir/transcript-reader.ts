import { existsSync } from 'node:fs';
import type Anthropic from '@anthropic-ai/sdk';
import type { z } from 'zod';
import { ForkcacheError } from '../util/errors.ts';
import type { FileCode } from '../util/json-file.ts';
import type { CheckRecord, LoopPrompt, RequestRecord } from '../loop/types.ts';
import { formatZodIssues } from '../util/validation.ts';
import { type JsonlLine, readJsonl, recordType } from './jsonl.ts';
import { verifyLines } from './run-mac.ts';
import type { RunKey } from './run-key.ts';
import { transcriptRefusal } from './run-trust.ts';
import type { TranscriptRecord } from './transcript.ts';
import { transcriptRecordSchemas, type TranscriptRecordType } from './transcript-schema.ts';

export interface TranscriptTool {
  id: string;
  name: string;
  /** The call's input as recorded (what a read-only call is re-run with on resume). */
  input: unknown;
  /** Undefined: the tool started and never finished (the process stopped while it ran). */
  result: { isError: boolean; content: string } | undefined;
}

export interface TranscriptTurn {
  turn: number;
  assistant: Anthropic.MessageParam;
  request: RequestRecord;
  tools: TranscriptTool[];
  /** The user turn the loop added after this turn (it made no tool call), if any. */
  prompt?: LoopPrompt | undefined;
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
  /** The turn of each of those requests (the fork sends that turn again on resume), in order. */
  unknownTurns: number[];
  /** Every run of the plan's check, in order. */
  checks: CheckRecord[];
  /** The fork's end, if nothing came after it (a retried or continued fork has none yet). */
  end: Extract<TranscriptRecord, { type: 'end' }> | undefined;
  /** The distributed jobs whose run of the fork ended here (every `end` naming one, in order). */
  endedJobs: string[];
}

/**
 * Read a fork's JSONL transcript (none yet: no turns). The one reader of transcripts, for
 * resume, the distributed hosts and the report. Lines follow `readJsonl`'s rule (a last line
 * cut short by a crash is dropped, any other malformed line is an error naming file:line);
 * every known record is checked against its schema (file:line, record type and field), and a
 * turn recorded twice or missing is an error. Unknown record types (newer writers) are
 * skipped. A later `start`, turn or prompt (the fork went on: resumed, retried) clears the
 * `end` before it.
 *
 * `key`: what resume trusts must verify (run-mac.ts): any record whose MAC does not, or that
 * has none, is an error (RUN_DIR_TAMPERED, RUN_DIR_UNSIGNED, RUN_DIR_OTHER_KEY) naming the line.
 * The report reads without one: it shows a run, it does not continue it.
 */
export function readTranscript(path: string, code: FileCode = 'INVALID_RUN_DIR', key?: RunKey): ReadTranscript {
  const out = emptyTranscript();
  if (!existsSync(path)) return out;
  const pending = new Set<string>(); // request-start records not answered yet: `turn:attempt`
  for (const { line, value } of readTranscriptLines(path, code, key)) {
    const at: LineAt = { path, line, code };
    const parsed = parseRecord(value, at);
    if (parsed) foldRecord(out, pending, parsed, at);
  }
  out.unknownOutcome = pending.size;
  out.unknownTurns = [...pending].map((key) => Number(key.split(':')[0])).sort((a, b) => a - b);
  return out;
}

/** A transcript with nothing in it: a fork that has not started. */
function emptyTranscript(): ReadTranscript {
  return {
    forkId: undefined,
    prefixSha256: undefined,
    directive: undefined,
    turns: [],
    failedAttempts: [],
    unknownOutcome: 0,
    unknownTurns: [],
    checks: [],
    end: undefined,
    endedJobs: [],
  };
}

/** The transcript's lines (`readJsonl`'s rule), every one verified first when `key` is given. */
function readTranscriptLines(path: string, code: FileCode, key: RunKey | undefined): JsonlLine[] {
  const lines = readJsonl(path, 'transcript', code);
  const verdict = key === undefined ? undefined : verifyLines(key, path, lines);
  if (verdict !== undefined && key !== undefined) throw transcriptRefusal(path, verdict, key);
  return lines;
}

/** Where a record was read, for the errors that name it (`file:line`), and their code. */
export interface LineAt {
  path: string;
  line: number;
  code: FileCode;
}

/** A known record, checked against its type's schema: the record as parsed, and the line's value as written. */
type ParsedRecord = {
  [T in TranscriptRecordType]: { type: T; record: z.output<(typeof transcriptRecordSchemas)[T]>; value: object };
}[TranscriptRecordType];

/**
 * Check one line's value against its record type's schema. Undefined: a record type this
 * reader does not know (a newer writer's), skipped. A value without a type, or a known record
 * that does not match its schema, is an error naming the line.
 */
export function parseRecord(value: object, at: LineAt): ParsedRecord | undefined {
  const { path, line, code } = at;
  const type = recordType(value);
  if (type === undefined)
    throw new ForkcacheError(code, `transcript ${path}:${line}: expected a JSON object with a "type"`, {
      data: { path, line },
    });
  if (!(type in transcriptRecordSchemas)) return undefined;
  const t = type as TranscriptRecordType;
  const result = transcriptRecordSchemas[t].safeParse(value);
  if (!result.success)
    throw new ForkcacheError(code, `transcript ${path}:${line}: ${t} record: ${formatZodIssues(result.error.issues)}`, {
      data: { path, line },
    });
  return { type: t, record: result.data, value } as ParsedRecord;
}

/**
 * Fold one record into the transcript read so far. `pending`: the requests written ahead and
 * not answered yet (`turn:attempt`); a turn answers every attempt of its number. A later
 * `start`, turn or prompt clears the `end` before it.
 */
export function foldRecord(out: ReadTranscript, pending: Set<string>, parsed: ParsedRecord, at: LineAt): void {
  switch (parsed.type) {
    case 'start': {
      const { record } = parsed;
      out.forkId = record.forkId;
      out.prefixSha256 = record.prefixSha256;
      out.directive = record.directive;
      out.end = undefined;
      break;
    }
    case 'request-start': {
      const { record } = parsed;
      pending.add(`${record.turn}:${record.attempt}`);
      break;
    }
    case 'attempt': {
      const { record } = parsed;
      pending.delete(`${record.turn}:${record.attempt}`);
      if (record.status === 'billed' && record.request)
        out.failedAttempts.push(record.request as unknown as RequestRecord);
      break;
    }
    case 'turn':
      foldTurn(out, pending, parsed.record, at);
      break;
    case 'tool-start': {
      const { record } = parsed;
      out.turns.at(-1)?.tools.push({
        id: record.id,
        name: record.name,
        input: (parsed.value as { input?: unknown }).input,
        result: undefined,
      });
      break;
    }
    case 'tool-end': {
      const { record } = parsed;
      const tool = out.turns.at(-1)?.tools.find((t) => t.id === record.id);
      if (tool) tool.result = { isError: record.isError, content: record.content };
      break;
    }
    case 'prompt': {
      const { record } = parsed;
      const last = out.turns.at(-1);
      if (last) last.prompt = { reason: record.reason, text: record.text };
      out.end = undefined;
      break;
    }
    case 'check': {
      const { type: _type, v: _v, ...record } = parsed.record as CheckRecord & { type?: unknown; v?: unknown };
      out.checks.push(record);
      break;
    }
    case 'end':
      out.end = { v: 1, type: 'end', ...parsed.record } as ReadTranscript['end'];
      if (out.end?.job !== undefined) out.endedJobs.push(out.end.job);
      break;
  }
}

/** A turn follows the one before it (recorded twice or missing is an error) and answers its pending requests. */
function foldTurn(
  out: ReadTranscript,
  pending: Set<string>,
  record: Extract<ParsedRecord, { type: 'turn' }>['record'],
  at: LineAt,
): void {
  const { path, line, code } = at;
  const expected = (out.turns.at(-1)?.turn ?? record.turn - 1) + 1;
  if (out.turns.length > 0 && record.turn !== expected) {
    const message =
      record.turn < expected
        ? `turn ${record.turn} is recorded twice`
        : `turn ${record.turn} follows turn ${expected - 1}: a turn is missing`;
    throw new ForkcacheError(code, `transcript ${path}:${line}: ${message}`, { data: { path, line } });
  }
  for (const key of pending) if (key.startsWith(`${record.turn}:`)) pending.delete(key);
  out.end = undefined;
  out.turns.push({
    turn: record.turn,
    assistant: record.assistant as Anthropic.MessageParam,
    request: record.request as unknown as RequestRecord,
    tools: [],
  });
}
