import { describe, expect, it } from 'vitest';
import {
  foldRecord,
  type LineAt,
  parseRecord,
  type ReadTranscript,
} from '../../../src/core/run-dir/transcript-reader.ts';

// The reader's steps apart: one line's record checked against its schema (parseRecord), then
// folded into the transcript read so far (foldRecord). readTranscript reads and runs them.

const at: LineAt = { path: 'f01.jsonl', line: 3, code: 'REPORT_FILE_INVALID' };
const usage = { input_tokens: 1, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
const request = (turn: number) => ({
  turn,
  requestId: null,
  messageId: `m${turn}`,
  usage,
  stopReason: 'tool_use',
  sentAt: 0,
  startedAt: 1,
  endedAt: 2,
});
const turn = (n: number) => ({
  v: 1,
  type: 'turn',
  turn: n,
  assistant: { role: 'assistant', content: [] },
  request: request(n),
});

function empty(): ReadTranscript {
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

/** Fold values as readTranscript does, line after line. */
function fold(values: object[], out = empty(), pending = new Set<string>()) {
  values.forEach((value, i) => {
    const parsed = parseRecord(value, { ...at, line: i + 1 });
    if (parsed) foldRecord(out, pending, parsed, { ...at, line: i + 1 });
  });
  return { out, pending };
}

describe('parseRecord: one line checked', () => {
  it('returns a known record with its type; skips an unknown type', () => {
    expect(parseRecord({ type: 'request-start', turn: 2, attempt: 0 }, at)).toMatchObject({
      type: 'request-start',
      record: { turn: 2, attempt: 0 },
    });
    expect(parseRecord({ type: 'from-a-newer-writer' }, at)).toBeUndefined();
  });

  it('names the file and line, with the caller’s code, for a value without a type or a record off its schema', () => {
    expect(() => parseRecord({ turn: 1 }, at)).toThrow(
      expect.objectContaining({
        code: 'REPORT_FILE_INVALID',
        message: 'transcript f01.jsonl:3: expected a JSON object with a "type"',
      }),
    );
    expect(() => parseRecord({ type: 'tool-end', turn: 1, id: 'x', isError: 'no', content: '' }, at)).toThrow(
      expect.objectContaining({ message: expect.stringMatching(/^transcript f01\.jsonl:3: tool-end record: isError/) }),
    );
  });
});

describe('foldRecord: the transcript’s shape', () => {
  it('puts tool calls and prompts under their turn, keeping the input as written', () => {
    const { out } = fold([
      { type: 'start', forkId: 'f01', prefixSha256: 'a'.repeat(64), directive: 'd' },
      turn(1),
      { type: 'tool-start', turn: 1, id: 't1', name: 'read_file', input: { path: 'a.ts' } },
      { type: 'tool-end', turn: 1, id: 't1', isError: false, content: 'text' },
      { type: 'tool-start', turn: 1, id: 't2', name: 'bash', input: { command: 'ls' } },
      turn(2),
      { type: 'prompt', turn: 2, reason: 'continue', text: 'go on' },
    ]);
    expect(out).toMatchObject({ forkId: 'f01', directive: 'd' });
    expect(out.turns.map((t) => t.turn)).toEqual([1, 2]);
    expect(out.turns[0]!.tools).toEqual([
      { id: 't1', name: 'read_file', input: { path: 'a.ts' }, result: { isError: false, content: 'text' } },
      // started and never finished: the process stopped while it ran
      { id: 't2', name: 'bash', input: { command: 'ls' }, result: undefined },
    ]);
    expect(out.turns[1]!.prompt).toEqual({ reason: 'continue', text: 'go on' });
  });

  it('keeps requests written ahead pending until an attempt or their turn answers them; billed attempts count', () => {
    const { out, pending } = fold([
      { type: 'request-start', turn: 1, attempt: 0 },
      { type: 'attempt', turn: 1, attempt: 0, status: 'billed', request: request(1) },
      { type: 'request-start', turn: 1, attempt: 1 },
      { type: 'request-start', turn: 1, attempt: 2 },
      turn(1),
      { type: 'request-start', turn: 2, attempt: 0 },
      { type: 'attempt', turn: 2, attempt: 0, status: 'not-billed' },
      { type: 'request-start', turn: 2, attempt: 1 },
    ]);
    expect(out.failedAttempts).toEqual([request(1)]);
    expect([...pending]).toEqual(['2:1']);
  });

  it('refuses a turn recorded twice or a missing one, naming the line', () => {
    expect(() => fold([turn(1), turn(1)])).toThrow(/^transcript f01\.jsonl:2: turn 1 is recorded twice$/);
    expect(() => fold([turn(1), turn(3)])).toThrow(
      /^transcript f01\.jsonl:2: turn 3 follows turn 1: a turn is missing$/,
    );
    // a resumed fork's transcript may start at any turn
    expect(fold([turn(4), turn(5)]).out.turns).toHaveLength(2);
  });

  it('keeps the end until a later turn or prompt, every job that ended, and the checks without their tags', () => {
    const end = { type: 'end', status: 'completed', turns: 1, toolCalls: 0, finalText: 'done', job: 'j1' };
    const check = {
      turn: 1,
      attempt: 1,
      command: 'npm test',
      exitCode: 0,
      timedOut: false,
      durationMs: 5,
      outputTail: '',
      passed: true,
    };
    const { out } = fold([turn(1), { v: 1, type: 'check', ...check }, end]);
    expect(out.end).toMatchObject({ v: 1, type: 'end', status: 'completed', job: 'j1' });
    expect(out.checks).toEqual([check]);
    fold([{ type: 'prompt', turn: 1, reason: 'retry', text: 'again' }], out);
    expect(out.end).toBeUndefined();
    fold([{ ...end, job: 'j2' }, turn(2)], out);
    expect(out.end).toBeUndefined();
    expect(out.endedJobs).toEqual(['j1', 'j2']);
  });
});
