import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { economicsCharts, economicsShape } from '../../../src/integrations/report/bench-economics.ts';
import { readBenchResults } from '../../../src/integrations/report/bench-report.ts';
import { writeBenchReport } from '../../../src/integrations/report/write-report.ts';
import { BENCH_FIXTURE } from './helpers.ts';

function benchFile(content: unknown): string {
  const path = join(mkdtempSync(join(tmpdir(), 'fc-bench-')), 'latest.json');
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

describe('bench report', () => {
  it('draws savings against N per strategy for economics rows, and a table for every suite', () => {
    const path = benchFile(readFileSync(BENCH_FIXTURE, 'utf8'));
    const written = writeBenchReport(path);
    expect(written.out).toBe(path.replace(/\.json$/, '.html'));
    const html = readFileSync(written.out, 'utf8');
    // One chart per savings column; each draws one line per strategy.
    expect(written.charts).toBe(2);
    const chart = /data-chart="savings-savings_vs_no_cache">(<svg[\s\S]*?<\/svg>)/.exec(html)![1]!;
    for (const strategy of ['first-child', 'prewarm', 'none']) expect(chart).toContain(`>${strategy}</text>`);
    for (const suite of ['dispatch', 'economics', 'future-suite']) expect(html).toContain(`data-suite="${suite}"`);
    expect(html).toContain('<code>prefix_bytes</code>');
    expect(html).toContain('{&quot;x&quot;:1}'); // an unknown nested value is shown, escaped
    expect(html).toContain('Forking pays from the second child on.');
  });

  it('finds the shape of economics rows, and only there', () => {
    const { suites } = readBenchResults(BENCH_FIXTURE);
    expect(economicsShape(suites[1]!)).toEqual({
      nKey: 'children',
      strategyKey: 'strategy',
      savingKeys: ['savings_vs_no_cache', 'savings_vs_fresh_agents'],
      facetKeys: [],
      overlayKeys: [],
    });
    expect(economicsShape(suites[0]!)).toBeUndefined();
    expect(economicsShape({ name: 'economics', rows: [{ strategy: 'x', savings: 0.5 }] })).toBeUndefined(); // no N: tables only
  });

  it('splits rows of several prefix sizes into one chart each, and reads "78.1%" savings', () => {
    const rows = ['10K', '50K'].flatMap((prefix) =>
      [2, 4, 8].flatMap((forks) =>
        ['forkcache', 'no-cache'].map((strategy) => ({
          prefix,
          forks,
          strategy,
          shared_tokens: strategy === 'no-cache' ? 'n/a' : 100,
          savings_vs_no_cache: strategy === 'no-cache' ? '0.0%' : `${60 + forks}.5%`,
        })),
      ),
    );
    const shape = economicsShape({ name: 'economics', rows })!;
    expect(shape).toEqual({
      nKey: 'forks',
      strategyKey: 'strategy',
      savingKeys: ['savings_vs_no_cache'],
      facetKeys: ['prefix'],
      overlayKeys: [],
    });
    const charts = economicsCharts(rows, shape);
    // human titles with units, not field names (issue 27)
    expect(charts.map((c) => c.caption)).toEqual([
      'savings vs no cache (%) against forks (shared prefix 10K): a line per strategy. The no-cache rows are the baseline itself (0 %) and have no line.',
      'savings vs no cache (%) against forks (shared prefix 50K): a line per strategy. The no-cache rows are the baseline itself (0 %) and have no line.',
    ]);
    expect(charts[0]!.svg).toContain('savings vs no cache (%)');
    // The y axis reaches the largest saving, 68.5%: percent strings are read as percent.
    expect(charts[0]!.svg).toMatch(/>(70|80)<\/text>/);
    expect(charts[0]!.svg).not.toMatch(/>(6,?000|7,?000)<\/text>/);
  });

  it('overlays providers on one chart (a colour each, a dash per strategy) instead of a chart per provider', () => {
    const rows = ['anthropic', 'openai'].flatMap((provider) =>
      [2, 4].flatMap((forks) =>
        ['forkcache', 'fresh-agents'].map((strategy) => ({
          provider,
          prefix: '10K',
          forks,
          strategy,
          savings_vs_no_cache: `${forks * (provider === 'openai' ? 10 : 20)}.0%`,
        })),
      ),
    );
    const shape = economicsShape({ name: 'economics', rows })!;
    expect(shape.overlayKeys).toEqual(['provider']);
    expect(shape.facetKeys).toEqual([]);
    const charts = economicsCharts(rows, shape);
    expect(charts).toHaveLength(1); // before: one chart per provider
    for (const line of [
      'anthropic · forkcache',
      'anthropic · fresh-agents',
      'openai · forkcache',
      'openai · fresh-agents',
    ])
      expect(charts[0]!.svg).toContain(`>${line}</text>`);
    expect(charts[0]!.caption).toContain('a colour per provider, a dash per strategy');
  });

  it('names the file and the field of a malformed results file', () => {
    expect(() => readBenchResults(benchFile('{"suites": ['))).toThrow(/latest\.json: not valid JSON/);
    expect(() => readBenchResults(benchFile({ suites: [{ title: 'x', rows: [] }] }))).toThrow(
      expect.objectContaining({
        code: 'REPORT_FILE_INVALID',
        message: expect.stringMatching(/latest\.json: suites\[0\]\.name: /),
      }),
    );
    expect(() => readBenchResults(join(tmpdir(), 'no-such-bench.json'))).toThrow(
      expect.objectContaining({ code: 'REPORT_FILE_MISSING' }),
    );
  });
});
