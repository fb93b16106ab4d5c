import { BASELINES_NOTE } from '../../core/ledger/baseline-words.ts';
import { priceSourceLine } from '../economics/estimate-format.ts';
import { sweepModeLine, type SweepRow } from '../economics/sweep-rows.ts';
import { COLORS, renderSvg } from './svg-chart.ts';

/*
 * `forkcache economics --sweep`, drawn: cost against the number of forks, one line per strategy
 * (fork, fresh agents, no cache) and per swept shape (prefix, model, …), on a log scale so a
 * 10K and a 100K prefix read on one chart. The price source and the baselines' definitions are
 * written on the chart itself: a saved SVG travels without the terminal output it came with.
 */

const STRATEGIES = [
  { key: 'fork_usd', name: 'fork', color: COLORS.actual, type: 'solid' },
  { key: 'fresh_agents_usd', name: 'fresh agents', color: COLORS.fresh, type: 'dashed' },
  { key: 'no_cache_usd', name: 'no cache', color: COLORS.noCache, type: 'dotted' },
] as const;
const SYMBOLS = ['circle', 'rect', 'triangle', 'diamond', 'pin', 'arrow'];

const k = (n: number): string => (n >= 1e6 ? `${n / 1e6}M` : n >= 1e3 ? `${n / 1e3}K` : String(n));

/** What tells one line's rows from another's: every swept field but the fork count. */
function shapeOf(r: SweepRow, varying: readonly (keyof SweepRow)[]): string {
  return varying
    .map((key) =>
      key === 'model'
        ? r.model
        : key === 'prefix'
          ? `prefix ${k(r.prefix)}`
          : `${key.replace('_', ' ')} ${k(r[key] as number)}`,
    )
    .join(', ');
}

/** Wrap a long note at spaces so it fits the chart's width. */
function wrap(text: string, width: number): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line !== '' && line.length + word.length + 1 > width) {
      lines.push(line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  return [...lines, line].join('\n');
}

/** The sweep as an SVG line chart (USD, log scale, against forks). */
export function economicsSweepChart(rows: readonly SweepRow[]): string {
  const varying = (['model', 'prefix', 'directive', 'file_tokens', 'fresh_tokens'] as const).filter(
    (key) => new Set(rows.map((r) => r[key])).size > 1,
  );
  const shapes = [...new Set(rows.map((r) => shapeOf(r, varying)))];
  const forks = [...new Set(rows.map((r) => r.forks))].sort((a, b) => a - b);
  const series = shapes.flatMap((shape, i) =>
    STRATEGIES.map((s) => ({
      type: 'line',
      name: shapes.length > 1 ? `${s.name}, ${shape}` : s.name,
      symbol: SYMBOLS[i % SYMBOLS.length],
      symbolSize: 7,
      lineStyle: { color: s.color, type: s.type, width: 2 },
      itemStyle: { color: s.color },
      data: forks.map((n) => {
        const row = rows.find((r) => r.forks === n && shapeOf(r, varying) === shape);
        return row ? Number((row[s.key] as number).toPrecision(6)) : null;
      }),
    })),
  );
  const models = [...new Set(rows.map((r) => r.model))];
  const sources = models.map((m) => {
    const r = rows.find((x) => x.model === m)!;
    const source = { name: r.price_source, retrieved: r.prices_retrieved, thirdParty: r.third_party };
    return priceSourceLine({ model: m, date: r.prices_date, pricesFrom: r.prices_from, source });
  });
  const notes = wrap([...sources, BASELINES_NOTE].join('. '), 175);
  const noteLines = notes.split('\n').length;
  const legendRows = Math.ceil(series.length / 3);
  const top = 70 + 16 * noteLines;
  return renderSvg(
    {
      title: {
        text: `forkcache economics: ${models.join(', ')}`,
        subtext: `${wrap(sweepModeLine(rows), 175)}\n${notes}`,
        left: 10,
        textStyle: { fontSize: 15 },
        subtextStyle: { fontSize: 11, lineHeight: 15 },
      },
      legend: { bottom: 5, left: 'center', width: 1000, itemWidth: 28 },
      grid: { left: 80, right: 30, top: top + 20, bottom: 50 + 22 * legendRows },
      xAxis: { type: 'category', name: 'forks', nameLocation: 'middle', nameGap: 28, data: forks.map(String) },
      yAxis: {
        type: 'log',
        name: 'USD (log scale)',
        axisLabel: { formatter: (v: number) => `$${v < 0.01 ? v.toPrecision(1) : v.toFixed(2)}` },
      },
      series,
    },
    { width: 1100, height: top + 380 + 22 * legendRows },
  );
}
