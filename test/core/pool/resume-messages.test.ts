import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  INTERRUPTED_TOOL_MESSAGE,
  READ_ONLY_INTERRUPTED_MESSAGE,
  resumeMessages,
} from '../../../src/core/pool/resume-messages.ts';
import { readTranscript } from '../../../src/core/run-dir/transcript-reader.ts';

// Issue 15: case 6 (a request in flight at kill -9 is reconciled on resume as "unknown
// outcome"; a failed billed attempt is read back for the ledger) and case 8 (a `null` or
// wrong-shaped line was a bare TypeError; a duplicated turn was not detected).

const usage = { input_tokens: 3, output_tokens: 5, cache_read_input_tokens: 100, cache_creation_input_tokens: 0 };
const request = (turn: number, messageId = `msg_${turn}`) => ({
  turn,
  requestId: null,
  messageId,
  usage,
  stopReason: 'tool_use',
  sentAt: 0,
  startedAt: 0,
  endedAt: 0,
});
const start = { v: 1, type: 'start', forkId: 'fo1', prefixSha256: 'abc', directive: 'd', at: '2026-11-30T00:00:00Z' };
const turn = (n: number) => ({
  v: 1,
  type: 'turn',
  turn: n,
  assistant: { role: 'assistant', content: [{ type: 'text', text: 'hi' }] },
  request: request(n),
});

function file(lines: unknown[], tail = ''): string {
  const path = join(mkdtempSync(join(tmpdir(), 'fc-tr-')), 'fo1.jsonl');
  writeFileSync(path, `${lines.map((l) => JSON.stringify(l)).join('\n')}\n${tail}`);
  return path;
}

describe('reading a transcript back (issue 15, cases 6 and 8)', () => {
  it('counts a request written ahead and never answered as unknown outcome, and reads billed failed attempts', () => {
    const path = file([
      start,
      { v: 1, type: 'request-start', turn: 1, attempt: 0 },
      { v: 1, type: 'attempt', turn: 1, attempt: 0, status: 'billed', request: request(1, 'msg_failed') },
      { v: 1, type: 'request-start', turn: 1, attempt: 1 },
      { v: 1, type: 'attempt', turn: 1, attempt: 1, status: 'not-billed' },
      { v: 1, type: 'request-start', turn: 1, attempt: 2 },
      turn(1),
      { v: 1, type: 'request-start', turn: 2, attempt: 0 }, // kill -9 here
    ]);
    const read = readTranscript(path);
    expect(read.turns.map((t) => t.turn)).toEqual([1]);
    expect(read.failedAttempts.map((r) => r.messageId)).toEqual(['msg_failed']);
    expect(read.unknownOutcome).toBe(1);
    expect(read.unknownTurns).toEqual([2]); // the turn resume sends again: its twin prices the estimate
  });

  it('names file:line and the field for a null line and for a wrong-shaped record', () => {
    const nullLine = file([start, null, turn(1)]);
    expect(() => readTranscript(nullLine)).toThrow(`transcript ${nullLine}:2: expected a JSON object`);
    const shapeless = file([start, { v: 1, type: 'turn', turn: 1, assistant: null, request: request(1) }]);
    expect(() => readTranscript(shapeless)).toThrow(new RegExp(`transcript ${shapeless}:2: turn record: assistant: `));
    const badTool = file([start, turn(1), { v: 1, type: 'tool-end', turn: 1, id: 't1', isError: 'no', content: '' }]);
    expect(() => readTranscript(badTool)).toThrow(`transcript ${badTool}:3: tool-end record: isError: `);
  });

  it('detects a duplicated or missing turn', () => {
    const twice = file([start, turn(1), turn(2), turn(2)]);
    expect(() => readTranscript(twice)).toThrow(`transcript ${twice}:4: turn 2 is recorded twice`);
    const gap = file([start, turn(1), turn(3)]);
    expect(() => readTranscript(gap)).toThrow(`transcript ${gap}:3: turn 3 follows turn 1: a turn is missing`);
  });

  it('still ignores a torn last line and unknown record kinds', () => {
    const path = file([start, { v: 1, type: 'some-future-record', x: 1 }, turn(1)], '{"v":1,"type":"tool-st');
    expect(readTranscript(path).turns).toHaveLength(1);
  });
});

describe('an interrupted read-only call is re-run on resume, one with effects is not (issue 24)', () => {
  it('lists an interrupted read_file for re-running; an interrupted bash keeps "effect unknown"', () => {
    /** A turn whose one call, `name`, started and never ended (the process stopped in it). */
    const interruptedIn = (name: string, input: object) =>
      resumeMessages(
        readTranscript(
          file([
            start,
            { ...turn(1), assistant: { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name, input }] } },
            { v: 1, type: 'tool-start', turn: 1, id: 't1', name, input },
          ]),
        ),
      );
    const read = interruptedIn('read_file', { path: 'a.ts' });
    expect(read.rerun).toEqual([{ turn: 1, id: 't1', name: 'read_file', input: { path: 'a.ts' } }]);
    expect(read.interrupted).toEqual([]);
    expect(JSON.stringify(read.messages[1])).toContain(READ_ONLY_INTERRUPTED_MESSAGE);
    const bash = interruptedIn('bash', { command: 'make' });
    expect(bash.rerun).toEqual([]);
    expect(bash.interrupted).toEqual(['t1']);
    expect(JSON.stringify(bash.messages[1])).toContain(JSON.stringify(INTERRUPTED_TOOL_MESSAGE).slice(1, -1));
  });

  it("does the same for the clients' tools: Claude Code's Read and Grep, Qwen Code's read_file re-run; Edit and Bash do not", () => {
    const interruptedIn = (name: string, input: object) =>
      resumeMessages(
        readTranscript(
          file([
            start,
            { ...turn(1), assistant: { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name, input }] } },
            { v: 1, type: 'tool-start', turn: 1, id: 't1', name, input },
          ]),
        ),
      );
    for (const name of ['Read', 'Grep', 'Glob', 'LS', 'grep_search', 'list_directory', 'read_many_files'])
      expect(
        interruptedIn(name, { file_path: '/p/a.ts' }).rerun.map((c) => c.name),
        name,
      ).toEqual([name]);
    for (const name of ['Edit', 'MultiEdit', 'Write', 'Bash', 'edit', 'run_shell_command', 'tool_call']) {
      const resumed = interruptedIn(name, { file_path: '/p/a.ts' });
      expect(resumed.rerun, name).toEqual([]);
      expect(resumed.interrupted, name).toEqual(['t1']);
    }
  });
});
