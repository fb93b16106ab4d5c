import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeResults } from '../../bench/results-files.ts';
import type { SuiteResult } from '../../bench/types.ts';

const suite = (name: string, value: number): SuiteResult => ({ name, title: name, rows: [{ value }] });
const options = { machine: 'test machine', order: ['a', 'b'] };
const read = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as { quick: boolean; suites: SuiteResult[] };

describe('bench results files (issue 27: a quick run never replaces the full figures)', () => {
  it('--quick writes quick.{json,md} and leaves latest.{json,md} as they were', () => {
    const dir = mkdtempSync(join(tmpdir(), 'fc-bench-out-'));
    writeFileSync(join(dir, 'latest.json'), 'the committed full run\n');
    writeFileSync(join(dir, 'latest.md'), 'the committed full run\n');
    writeResults(dir, [suite('a', 1)], { ...options, quick: true, merge: false });
    expect(readFileSync(join(dir, 'latest.json'), 'utf8')).toBe('the committed full run\n');
    expect(readFileSync(join(dir, 'latest.md'), 'utf8')).toBe('the committed full run\n');
    expect(read(join(dir, 'quick.json'))).toMatchObject({ quick: true, suites: [{ name: 'a' }] });
    expect(readFileSync(join(dir, 'quick.md'), 'utf8')).toContain('| value |');
  });

  it('a full run replaces latest; --merge keeps the other suites of the same kind of run only', () => {
    const dir = mkdtempSync(join(tmpdir(), 'fc-bench-out-'));
    writeResults(dir, [suite('a', 1), suite('b', 2)], { ...options, quick: false, merge: false });
    writeResults(dir, [suite('b', 3)], { ...options, quick: true, merge: true });
    expect(read(join(dir, 'quick.json')).suites.map((s) => s.name)).toEqual(['b']); // no quick run before: nothing kept
    writeResults(dir, [suite('b', 4)], { ...options, quick: false, merge: true });
    const latest = read(join(dir, 'latest.json'));
    expect(latest.quick).toBe(false);
    expect(latest.suites.map((s) => [s.name, s.rows[0]?.['value'], s.ranOn !== undefined])).toEqual([
      ['a', 1, true],
      ['b', 4, false],
    ]);
    expect(existsSync(join(dir, 'quick.md'))).toBe(true);
  });
});
