import { cpSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { locateRuns } from '../../../src/integrations/report/locate.ts';
import { writeRunReport } from '../../../src/integrations/report/write-report.ts';
import { copyRun, editJsonl, FIXTURE_RUN } from './helpers.ts';

/** A runs directory with the fixture twice: `fo001-aaaa` started an hour after `fo002-bbbb`. */
function twoRuns(): { runs: string; later: string; earlier: string } {
  const { runs, dir: later } = copyRun('fo001-aaaa');
  editJsonl(join(later, 'events.jsonl'), (r) => ({ ...r, at: r.at + 3_600_000 }));
  const earlier = join(runs, 'fo002-bbbb');
  cpSync(FIXTURE_RUN, earlier, { recursive: true });
  return { runs, later, earlier };
}

describe('RUN_DIR: one fan-out, or a runs directory', () => {
  it('picks the latest fan-out by start time, not by name, and says which', () => {
    const { runs, later } = twoRuns();
    const located = locateRuns(runs, { all: false });
    expect(located.dirs).toEqual([later]);
    expect(located.found).toBe(2);
    expect(located.scope).toBe(`the latest of 2 fan-out(s) in ${runs}: ${later}; --all renders all 2`);
  });

  it('renders all of them, oldest first, with --all', () => {
    const { runs, later, earlier } = twoRuns();
    expect(locateRuns(runs, { all: true }).dirs).toEqual([earlier, later]);
    const written = writeRunReport(runs, { all: true });
    expect(written.out).toBe(join(runs, 'report.html'));
    expect(written.fanouts).toEqual(['fo001-e3a67061', 'fo001-e3a67061']);
    expect(written.charts).toBe(8);
    expect(readFileSync(written.out, 'utf8').match(/<section class="fanout"/g)).toHaveLength(2);
  });

  it('is an error naming what was expected for an empty or missing directory', () => {
    const empty = mkdtempSync(join(tmpdir(), 'fc-empty-'));
    expect(() => locateRuns(empty, { all: false })).toThrow(
      expect.objectContaining({
        code: 'REPORT_FILE_MISSING',
        message: expect.stringContaining(`${empty}: no manifest.json here nor in any sub-directory`),
      }),
    );
    expect(() => locateRuns(join(empty, 'nope'), { all: false })).toThrow(`${join(empty, 'nope')}: no such directory`);
  });
});

describe('the HTML page', () => {
  it('holds four SVG charts, the fork table and the prefix, and nothing that loads from elsewhere', () => {
    const { dir } = copyRun();
    const out = join(dir, 'out', 'r.html');
    const written = writeRunReport(dir, { out });
    const html = readFileSync(out, 'utf8');
    expect(written).toMatchObject({ out, charts: 4, found: 1, fanouts: ['fo001-e3a67061'] });
    for (const name of ['timeline', 'tokens', 'cost', 'hit-ratio'])
      expect(html).toMatch(new RegExp(`data-chart="${name}"><svg [^>]*>[\\s\\S]*?<path`));
    expect(html.match(/<tr>/g)!.length).toBeGreaterThanOrEqual(8 + 1);
    expect(html).toContain('e3a670619e02d9888d84642d0b71f72030e4573ccf518ff5785147295b944635');
    expect(html).not.toMatch(/<script|<link|src="http|href="http|@import/);
  });

  it('escapes text that comes from the run (directives, reports)', () => {
    const { dir } = copyRun();
    editJsonl(join(dir, 'events.jsonl'), (r) => {
      if (r.type === 'fanout-start') r.forks[0].directive = 'rename <script>alert(1)</script> & "x"';
      return r;
    });
    const html = readFileSync(writeRunReport(dir).out, 'utf8');
    expect(html).not.toContain('<script>alert(1)</script>');
    expect(html).toContain('rename &lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;x&quot;');
  });
});
