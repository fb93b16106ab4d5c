import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readTranscript } from '../../../src/core/run-dir/transcript-reader.ts';
import { readReportJsonl } from '../../../src/integrations/report/read-files.ts';
import { readJsonl } from '../../../src/core/run-dir/jsonl.ts';

const dir = mkdtempSync(join(tmpdir(), 'forkcache-jsonl-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
function file(text: string): string {
  const path = join(dir, `${++n}.jsonl`);
  writeFileSync(path, text);
  return path;
}
const START = '{"v":1,"type":"start","forkId":"f","prefixSha256":"a","directive":"d","at":""}';

describe('one rule for a torn last line', () => {
  it('drops a last line without its newline that does not parse (a killed write)', () => {
    const path = file(`${START}\n\n{"v":1,"type":"tu`);
    expect(readJsonl(path, 'transcript').map((l) => l.line)).toEqual([1]);
    // the resume reader and the report reader agree: they are the same reader
    expect(readTranscript(path).forkId).toBe('f');
    expect(readReportJsonl(path, 'transcript')).toHaveLength(1);
  });

  it('rejects a complete last line that does not parse, in resume and in the report alike', () => {
    const path = file(`${START}\n{"v":1,"type":"tu\n`);
    const message = `transcript ${path}:2: not valid JSON`;
    expect(() => readJsonl(path, 'transcript')).toThrow(
      expect.objectContaining({ code: 'INVALID_RUN_DIR', message: expect.stringContaining(message) }),
    );
    expect(() => readTranscript(path)).toThrow(
      expect.objectContaining({ code: 'INVALID_RUN_DIR', message: expect.stringContaining(message) }),
    );
    expect(() => readReportJsonl(path, 'transcript')).toThrow(
      expect.objectContaining({ code: 'REPORT_FILE_INVALID', message: expect.stringContaining(message) }),
    );
  });

  it('rejects a malformed line before the last, and a line that is not an object', () => {
    expect(() => readJsonl(file(`{"a":\n${START}`), 'events')).toThrow(/^events \S+:1: not valid JSON \(/);
    expect(() => readJsonl(file(`${START}\n[1,2]\n`), 'events')).toThrow(/^events \S+:2: expected a JSON object$/);
  });
});
