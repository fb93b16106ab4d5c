import { describe, expect, it } from 'vitest';
import { judgeReport, parseReport } from '../../../src/core/fork/report.ts';

describe('parseReport', () => {
  it('splits the five labelled fields', () => {
    const r = parseReport(
      'Scope: rename in a.ts\nResult: renamed 3 uses\nKey files: src/a.ts\nFiles changed: src/a.ts, src/b.ts\nIssues: none',
    );
    expect(r).toMatchObject({
      scope: 'rename in a.ts',
      result: 'renamed 3 uses',
      keyFiles: 'src/a.ts',
      filesChanged: 'src/a.ts, src/b.ts',
      issues: 'none',
    });
    expect(r.files).toEqual(['src/a.ts', 'src/b.ts']);
    expect(r.missing).toEqual([]);
  });

  it('tolerates a preamble, markdown, multi-line values and missing fields', () => {
    const r = parseReport(
      'Done! Here is my report.\n\n**Scope:** the parser\n- **Result:** it works\n  across two lines\n## Files changed:\n- `src/p.ts`\n- src/q.ts\n',
    );
    expect(r.preamble).toBe('Done! Here is my report.');
    expect(r.scope).toBe('the parser');
    expect(r.result).toBe('it works\n  across two lines');
    expect(r.files).toEqual(['src/p.ts', 'src/q.ts']);
    expect(r.missing).toEqual(['Key files', 'Issues']);
  });

  it('reports every field missing for free text, and "none" lists no files', () => {
    expect(parseReport('I could not do it.').missing).toEqual([
      'Scope',
      'Result',
      'Key files',
      'Files changed',
      'Issues',
    ]);
    expect(parseReport('files changed: None.').files).toEqual([]);
    expect(parseReport('FILES   CHANGED: x.ts').filesChanged).toBe('x.ts');
  });
});

describe('judgeReport: does the answer say the work is done', () => {
  const report = (result: string, issues = 'none'): string =>
    `Scope: rename a\nResult: ${result}\nKey files: a.ts\nFiles changed: a.ts\nIssues: ${issues}`;

  it('done: a report whose Result says what was done (even mentioning a failure later on)', () => {
    for (const result of [
      'renamed 3 occurrences',
      'done',
      'no occurrences of a; nothing to change',
      'renamed 2; the old tests failed before',
    ])
      expect(judgeReport(report(result), { requireReport: true })).toEqual({ done: true });
  });

  it('not done: a Result that opens by saying so, with the reason and the first line of Issues', () => {
    for (const result of [
      'not done',
      'Not done: the file is missing',
      '**Failed**',
      'Could not read a.ts',
      "couldn't",
      'Unable to edit',
      'partially done',
      'did not apply',
      'Cannot proceed',
    ])
      expect(judgeReport(report(result), { requireReport: true }).done, result).toBe(false);
    expect(judgeReport(report('not done', 'read_file failed: too large\nmore'), { requireReport: true })).toEqual({
      done: false,
      reason: "the fork's report says Result: not done; Issues: read_file failed: too large",
    });
  });

  it('not done: no Scope:/Result: for a fork, an empty text for anyone; a fresh agent needs no report', () => {
    expect(judgeReport('all good', { requireReport: true })).toEqual({
      done: false,
      reason: "the fork's report lacks Scope: and Result: (a fork ends with a labelled report)",
    });
    expect(judgeReport('Result: renamed', { requireReport: true })).toMatchObject({
      done: false,
      reason: expect.stringMatching(/lacks Scope:/),
    });
    expect(judgeReport('  \n', { requireReport: false })).toMatchObject({
      done: false,
      reason: expect.stringMatching(/empty final text/),
    });
    expect(judgeReport('all good', { requireReport: false })).toEqual({ done: true });
    expect(judgeReport('Result: not done', { requireReport: false }).done).toBe(false);
  });
});
