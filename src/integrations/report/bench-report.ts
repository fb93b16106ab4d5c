import { z } from 'zod';
import { escapeHtml, figure, page, raw, table } from './html.ts';
import { benchTitle } from './bench-titles.ts';
import { parseAt, readReportJson } from './read-files.ts';
import { economicsCharts, economicsShape } from './bench-economics.ts';

/*
 * `npm run bench` results (bench/results/latest.json). Suites are read generically: every
 * suite becomes a table of its rows, whatever its columns, so suites added later need nothing
 * here. An `economics` suite is also drawn (bench-economics.ts).
 */

const benchSchema = z.looseObject({
  date: z.string().optional(),
  machine: z.string().optional(),
  quick: z.boolean().optional(),
  suites: z.array(
    z.looseObject({
      name: z.string().min(1),
      title: z.string().optional(),
      rows: z.array(z.record(z.string(), z.unknown())),
      conclusion: z.string().optional(),
    }),
  ),
});

type BenchResults = z.output<typeof benchSchema>;
type Suite = BenchResults['suites'][number];

export function readBenchResults(path: string): BenchResults {
  return parseAt(benchSchema, readReportJson(path, 'benchmark results'), path);
}

function format(value: unknown): string | number {
  if (typeof value === 'number') return Number.isInteger(value) ? value : Number(value.toPrecision(4));
  if (value === null || value === undefined) return '';
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

function suiteTable(suite: Suite): string {
  const columns = [...new Set(suite.rows.flatMap((r) => Object.keys(r)))];
  if (columns.length === 0) return '<p><em>no rows</em></p>';
  // the human title, and the field name as it is in the JSON (what a script reads)
  const headers = columns.map((c) => raw(`${escapeHtml(benchTitle(c))}<br><code>${escapeHtml(c)}</code>`));
  return `<div class="scroll-box">${table(
    headers,
    suite.rows.map((r) => columns.map((c) => format(r[c]))),
    'bench',
  )}</div>`;
}

function suiteSection(suite: Suite): string {
  const parts = [
    `<section class="suite" data-suite="${escapeHtml(suite.name)}">`,
    `<h2>${escapeHtml(suite.title ?? suite.name)}</h2>`,
  ];
  const shape = economicsShape(suite);
  if (shape)
    for (const chart of economicsCharts(suite.rows, shape)) parts.push(figure(chart.name, chart.svg, chart.caption));
  parts.push(suiteTable(suite));
  if (suite.conclusion) parts.push(`<p>${escapeHtml(suite.conclusion)}</p>`);
  parts.push('</section>');
  return parts.join('\n');
}

/** The bench report page: a chart for economics rows, a table for every suite. */
export function renderBenchReport(results: BenchResults, source: string): string {
  const title = 'forkcache benchmarks';
  const meta = [source, results.date, results.machine, results.quick ? 'quick run' : undefined]
    .filter(Boolean)
    .join(' · ');
  const body = [`<h1>${title}</h1>`, `<p class="meta">${escapeHtml(meta)}</p>`, ...results.suites.map(suiteSection)];
  if (results.suites.length === 0) body.push('<p><em>no suites in this file</em></p>');
  return page(title, body.join('\n'));
}
