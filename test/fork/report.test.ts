import { describe, expect, it } from 'vitest';
import { parseReport } from '../../src/fork/report.ts';

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
