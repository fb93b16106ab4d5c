import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readTranscript } from '../../../src/core/run-dir/transcript-reader.ts';

const dir = mkdtempSync(join(tmpdir(), 'forkcache-transcript-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const line = (record: object): string => `${JSON.stringify({ v: 1, ...record })}\n`;
const START = { type: 'start', forkId: 'f', prefixSha256: 'a'.repeat(64), directive: 'd', at: '' };
const END = { type: 'end', status: 'completed', turns: 1, toolCalls: 0, finalText: 'done' };

describe('readTranscript: the one transcript reader', () => {
  it('checks start and end records, naming the line, with the caller’s code', () => {
    const path = join(dir, 'bad-end.jsonl');
    writeFileSync(path, line(START) + line({ ...END, status: 'finished' }));
    expect(() => readTranscript(path)).toThrow(
      expect.objectContaining({
        code: 'INVALID_RUN_DIR',
        message: expect.stringMatching(/^transcript \S+bad-end\.jsonl:2: end record: status: /),
      }),
    );
    expect(() => readTranscript(path, 'REPORT_FILE_INVALID')).toThrow(
      expect.objectContaining({ code: 'REPORT_FILE_INVALID' }),
    );
  });

  it('a later start (a run appended to the file) clears the end before it; unknown records pass', () => {
    const path = join(dir, 'appended.jsonl');
    writeFileSync(
      path,
      line(START) + line(END) + line({ type: 'future-kind', x: 1 }) + line({ ...START, prefixSha256: 'b'.repeat(64) }),
    );
    const transcript = readTranscript(path);
    expect(transcript.end).toBeUndefined();
    expect(transcript.prefixSha256).toBe('b'.repeat(64));
    expect(readTranscript(join(dir, 'none.jsonl')).turns).toEqual([]);
  });
});
