import { benchTitle } from './bench-titles.ts';
import { COLORS, renderSvg } from './svg-chart.ts';

/*
 * The `economics` bench suite, drawn: savings against the number of children, one line per
 * strategy. Its columns are found by name and by value, not fixed, because the suite is still
 * growing: N is the first numeric column among N_KEYS, the strategy the first all-text column
 * among STRATEGY_KEYS, savings every column named like "sav…" holding fractions or "78.1%"
 * strings. Providers and models (OVERLAY_KEYS) are overlaid on one chart, a colour each, the
 * strategy drawn by the line's dash, so they compare at a glance; any other text column with a
 * few distinct values (e.g. the prefix size) splits the rows into one chart per value, so
 * lines never mix two prefix sizes. When every row has the same N, the x axis is the first
 * numeric column that varies (e.g. the read multiplier across models).
 */

type Row = Record<string, unknown>;

interface EconomicsShape {
  nKey: string;
  strategyKey: string | undefined;
  savingKeys: string[];
  facetKeys: string[];
  /** Drawn on one chart (provider, model): part of each line's name. */
  overlayKeys: string[];
}

interface EconomicsChart {
  name: string;
  svg: string;
  caption: string;
}

const N_KEYS = ['n', 'N', 'children', 'forks', 'fork_count', 'read_multiplier'];
const OVERLAY_KEYS = ['provider', 'model'];
/** A strategy whose savings are 0 by definition (the baseline itself) adds no line. */
const BASELINE_STRATEGIES = ['no-cache'];
const DASHES = ['solid', 'dashed', 'dotted'] as const;
const STRATEGY_KEYS = ['strategy', 'warm', 'convention', 'mode'];
const MAX_FACET_VALUES = 6;
const PERCENT = /^\s*(-?\d+(?:\.\d+)?)\s*%\s*$/;
const PALETTE = [COLORS.actual, COLORS.fresh, COLORS.written, COLORS.read, COLORS.uncached, COLORS.ceiling];

const isSaving = (v: unknown): boolean => typeof v === 'number' || (typeof v === 'string' && PERCENT.test(v));

/** The shape of an economics suite's rows, if a chart can show them. */
export function economicsShape(suite: { name: string; rows: Row[] }): EconomicsShape | undefined {
  const rows = suite.rows;
  if (!suite.name.toLowerCase().includes('economics') || rows.length === 0) return undefined;
  const keys = Object.keys(rows[0]!);
  const all = (key: string, test: (v: unknown) => boolean): boolean => rows.every((r) => test(r[key]));
  const numeric = N_KEYS.filter((k) => all(k, (v) => typeof v === 'number'));
  const nKey = numeric.find((k) => new Set(rows.map((r) => r[k])).size > 1) ?? numeric[0];
  const strategyKey = STRATEGY_KEYS.find((k) => all(k, (v) => typeof v === 'string'));
  const savingKeys = keys.filter((k) => /sav/i.test(k) && all(k, isSaving));
  if (!nKey || savingKeys.length === 0) return undefined;
  const splits = keys.filter((k) => {
    if (k === nKey || k === strategyKey || savingKeys.includes(k) || !all(k, (v) => typeof v === 'string'))
      return false;
    const distinct = new Set(rows.map((r) => r[k])).size;
    return distinct > 1 && distinct <= MAX_FACET_VALUES;
  });
  const overlayKeys = splits.filter((k) => OVERLAY_KEYS.includes(k));
  return { nKey, strategyKey, savingKeys, facetKeys: splits.filter((k) => !overlayKeys.includes(k)), overlayKeys };
}

/** A savings value in percent: a fraction (as the ledger's JSON has them) or a "78.1%" string. */
function percent(value: unknown, fractions: boolean): number {
  if (typeof value === 'string') return Number(PERCENT.exec(value)![1]);
  return (value as number) * (fractions ? 100 : 1);
}

function chart(rows: Row[], shape: EconomicsShape, key: string): string {
  const { nKey, strategyKey, overlayKeys } = shape;
  // Numbers all within ±1 are fractions; larger ones are taken as percent already.
  const fractions = rows.every((r) => typeof r[key] !== 'number' || Math.abs(r[key] as number) <= 1);
  const overlayOf = (r: Row): string => overlayKeys.map((k) => String(r[k])).join(' · ');
  const overlays = [...new Set(rows.map(overlayOf))];
  const strategies = strategyKey ? [...new Set(rows.map((r) => String(r[strategyKey])))] : [];
  const lines = new Map<string, { overlay: string; strategy: string; data: [number, number][] }>();
  for (const r of rows) {
    const strategy = strategyKey ? String(r[strategyKey]) : '';
    if (BASELINE_STRATEGIES.includes(strategy)) continue;
    const overlay = overlayOf(r);
    const name = [overlay, strategy].filter(Boolean).join(' · ') || benchTitle(key);
    const line = lines.get(name) ?? { overlay, strategy, data: [] };
    line.data.push([r[nKey] as number, Number(percent(r[key], fractions).toFixed(3))]);
    lines.set(name, line);
  }
  // one point per model (e.g. across read multipliers): one line through them, each point named
  if ([...lines.values()].every((l) => l.data.length === 1) && lines.size > 1) return pointsChart(lines, key, nKey);
  // a colour per provider or model (else per strategy), a dash per strategy
  const series = [...lines].map(([name, line]) => {
    const color =
      PALETTE[
        (overlayKeys.length > 0 ? overlays.indexOf(line.overlay) : strategies.indexOf(line.strategy)) % PALETTE.length
      ];
    const dash =
      overlayKeys.length > 0 ? DASHES[Math.max(0, strategies.indexOf(line.strategy)) % DASHES.length] : 'solid';
    return {
      type: 'line',
      name,
      symbolSize: 6,
      itemStyle: { color },
      lineStyle: { color, type: dash, width: 2 },
      data: line.data.sort((a, b) => a[0] - b[0]),
    };
  });
  return renderSvg(
    {
      legend: { top: 0, type: 'plain' },
      grid: { left: 70, right: 30, top: series.length > 4 ? 70 : 40, bottom: 45 },
      xAxis: {
        type: 'value',
        name: benchTitle(nKey),
        nameLocation: 'middle',
        nameGap: 28,
        minInterval: nKey === 'read_multiplier' ? 0 : 1,
      },
      yAxis: { type: 'value', name: benchTitle(key) },
      series,
    },
    { width: 960, height: series.length > 4 ? 380 : 340 },
  );
}

function pointsChart(lines: Map<string, { data: [number, number][] }>, key: string, nKey: string): string {
  const points = [...lines].map(([name, l]) => ({ name, value: l.data[0]! })).sort((a, b) => a.value[0] - b.value[0]);
  return renderSvg(
    {
      grid: { left: 70, right: 40, top: 40, bottom: 45 },
      xAxis: { type: 'value', name: benchTitle(nKey), nameLocation: 'middle', nameGap: 28, scale: true },
      yAxis: { type: 'value', name: benchTitle(key) },
      series: [
        {
          type: 'line',
          symbolSize: 8,
          itemStyle: { color: PALETTE[0] },
          lineStyle: { color: PALETTE[0] },
          label: { show: true, formatter: '{b}', position: 'top', fontSize: 11 },
          data: points,
        },
      ],
    },
    { width: 960, height: 340 },
  );
}

/** One chart per savings column and per value of the facet columns. */
export function economicsCharts(rows: Row[], shape: EconomicsShape): EconomicsChart[] {
  const facets = new Map<string, Row[]>();
  for (const r of rows) {
    const label = shape.facetKeys.map((k) => `${benchTitle(k)} ${String(r[k])}`).join(', ');
    facets.set(label, [...(facets.get(label) ?? []), r]);
  }
  const lines = [
    ...shape.overlayKeys.map((k) => `a colour per ${k}`),
    ...(shape.strategyKey ? [`${shape.overlayKeys.length > 0 ? 'a dash' : 'a line'} per ${shape.strategyKey}`] : []),
  ];
  const baseline = shape.strategyKey
    ? ` The ${BASELINE_STRATEGIES.join(', ')} rows are the baseline itself (0 %) and have no line.`
    : '';
  return [...facets].flatMap(([label, group], f) =>
    shape.savingKeys.map((key) => ({
      name: `savings-${key}${shape.facetKeys.length > 0 ? `-${f + 1}` : ''}`,
      svg: chart(group, shape, key),
      caption: `${benchTitle(key)} against ${benchTitle(shape.nKey)}${label ? ` (${label})` : ''}${lines.length > 0 ? `: ${lines.join(', ')}` : ''}.${baseline}`,
    })),
  );
}
