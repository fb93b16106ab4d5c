import { COLORS, renderSvg } from './svg-chart.ts';

/*
 * The `economics` bench suite, drawn: savings against the number of children, one line per
 * strategy. Its columns are found by name and by value, not fixed, because the suite is still
 * growing: N is the first numeric column among N_KEYS, the strategy the first all-text column
 * among STRATEGY_KEYS, savings every column named like "sav…" holding fractions or "78.1%"
 * strings, and any other text column with a few distinct values (e.g. the prefix size) splits
 * the rows into one chart per value, so lines never mix two prefix sizes.
 */

type Row = Record<string, unknown>;

export interface EconomicsShape {
  nKey: string;
  strategyKey: string | undefined;
  savingKeys: string[];
  facetKeys: string[];
}

export interface EconomicsChart {
  name: string;
  svg: string;
  caption: string;
}

const N_KEYS = ['n', 'N', 'children', 'forks', 'fork_count'];
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
  const nKey = N_KEYS.find((k) => all(k, (v) => typeof v === 'number'));
  const strategyKey = STRATEGY_KEYS.find((k) => all(k, (v) => typeof v === 'string'));
  const savingKeys = keys.filter((k) => /sav/i.test(k) && all(k, isSaving));
  if (!nKey || savingKeys.length === 0) return undefined;
  const facetKeys = keys.filter((k) => {
    if (k === nKey || k === strategyKey || savingKeys.includes(k) || !all(k, (v) => typeof v === 'string'))
      return false;
    const distinct = new Set(rows.map((r) => r[k])).size;
    return distinct > 1 && distinct <= MAX_FACET_VALUES;
  });
  return { nKey, strategyKey, savingKeys, facetKeys };
}

/** A savings value in percent: a fraction (as the ledger's JSON has them) or a "78.1%" string. */
function percent(value: unknown, fractions: boolean): number {
  if (typeof value === 'string') return Number(PERCENT.exec(value)![1]);
  return (value as number) * (fractions ? 100 : 1);
}

function chart(rows: Row[], shape: EconomicsShape, key: string): string {
  const { nKey, strategyKey } = shape;
  // Numbers all within ±1 are fractions; larger ones are taken as percent already.
  const fractions = rows.every((r) => typeof r[key] !== 'number' || Math.abs(r[key] as number) <= 1);
  const lines = new Map<string, [number, number][]>();
  for (const r of rows) {
    const name = strategyKey ? String(r[strategyKey]) : key;
    lines.set(name, [...(lines.get(name) ?? []), [r[nKey] as number, Number(percent(r[key], fractions).toFixed(3))]]);
  }
  const series = [...lines].map(([name, data], i) => ({
    type: 'line',
    name,
    symbolSize: 6,
    itemStyle: { color: PALETTE[i % PALETTE.length] },
    lineStyle: { color: PALETTE[i % PALETTE.length] },
    data: data.sort((a, b) => a[0] - b[0]),
  }));
  return renderSvg(
    {
      legend: { top: 0 },
      grid: { left: 70, right: 30, top: 40, bottom: 45 },
      xAxis: { type: 'value', name: nKey, nameLocation: 'middle', nameGap: 28, minInterval: 1 },
      yAxis: { type: 'value', name: `${key}, %` },
      series,
    },
    { width: 960, height: 340 },
  );
}

/** One chart per savings column and per value of the facet columns. */
export function economicsCharts(rows: Row[], shape: EconomicsShape): EconomicsChart[] {
  const facets = new Map<string, Row[]>();
  for (const r of rows) {
    const label = shape.facetKeys.map((k) => `${k} ${String(r[k])}`).join(', ');
    facets.set(label, [...(facets.get(label) ?? []), r]);
  }
  const per = shape.strategyKey ? `, one line per ${shape.strategyKey}` : '';
  return [...facets].flatMap(([label, group], f) =>
    shape.savingKeys.map((key) => ({
      name: `savings-${key}${shape.facetKeys.length > 0 ? `-${f + 1}` : ''}`,
      svg: chart(group, shape, key),
      caption: `${key} against ${shape.nKey}${label ? ` (${label})` : ''}${per}.`,
    })),
  );
}
