import { COLORS, renderSvg } from '../../report/svg-chart.ts';
import {
  CHART_WIDTH as WIDTH,
  categoryLabels,
  chartLegend as legend,
  inputTokensChart,
} from '../../report/tokens-chart.ts';
import type { ProxyFanOutSummary } from './ledger.ts';
import type { ExchangeRecord } from '../diagnosis/types.ts';

const label = (r: ExchangeRecord): string => `#${r.seq}${r.fanout ? ` ${r.fanout}` : ''}`;

interface RenderApi {
  value(dimension: number): number;
  coord(point: [number, number]): [number, number];
  size(point: [number, number]): [number, number];
}

/** One row per request: held at the warm-first gate, waiting for the first byte, streaming. */
export function timelineChart(records: readonly ExchangeRecord[]): string {
  const t0 = Math.min(...records.map((r) => r.receivedAt));
  const rows = records.map(label);
  const phases = [
    { name: 'held (warm-first)', color: COLORS.warming, span: (r: ExchangeRecord) => [r.receivedAt, r.sentAt] },
    {
      name: 'waiting for the first byte',
      color: COLORS.queued,
      span: (r: ExchangeRecord) => [r.sentAt, r.sentAt + (r.ttfbMs ?? r.durationMs ?? 0)],
    },
    {
      name: 'response',
      color: COLORS.request,
      span: (r: ExchangeRecord) => [r.sentAt + (r.ttfbMs ?? 0), r.sentAt + (r.durationMs ?? r.ttfbMs ?? 0)],
    },
  ];
  const end = Math.max(1, ...records.map((r) => r.sentAt + (r.durationMs ?? 0) - t0));
  const series = phases.map((phase) => ({
    type: 'custom',
    name: phase.name,
    itemStyle: { color: phase.color },
    encode: { x: [1, 2], y: 0 },
    data: records.map((r, i) => [i, ...phase.span(r).map((t) => t - t0)]).filter((d) => d[2]! > d[1]!),
    renderItem: (_params: unknown, api: RenderApi) => {
      const from = api.coord([api.value(1), api.value(0)]);
      const to = api.coord([api.value(2), api.value(0)]);
      const height = api.size([0, 1])[1] * 0.6;
      return {
        type: 'rect',
        shape: { x: from[0], y: from[1] - height / 2, width: Math.max(1, to[0] - from[0]), height },
        style: { fill: phase.color },
      };
    },
  }));
  return renderSvg(
    {
      legend: { ...legend, data: phases.map((p) => p.name) },
      grid: { left: 90, right: 30, top: 40, bottom: 40 },
      xAxis: {
        type: 'value',
        name: 'ms since the first request arrived',
        nameLocation: 'middle',
        nameGap: 26,
        max: Math.ceil(end),
      },
      yAxis: { type: 'category', data: rows, inverse: true, axisLabel: { fontSize: 11 } },
      series,
    },
    { width: WIDTH, height: 90 + 22 * rows.length },
  );
}

/** Input tokens of every request, stacked as read / written / uncached. */
export function tokensChart(records: readonly ExchangeRecord[]): string {
  return inputTokensChart(records.flatMap((r) => (r.usage ? [{ label: label(r), usage: r.usage }] : [])));
}

/** Cumulative cost in the order sent, against the same requests without caching. */
export function costChart(records: readonly ExchangeRecord[]): string | undefined {
  const priced = records.filter((r) => r.costUsd !== null && r.noCacheUsd !== null);
  if (priced.length === 0) return undefined;
  const cumulative = (pick: (r: ExchangeRecord) => number): number[] => {
    let sum = 0;
    return priced.map((r) => Number((sum += pick(r)).toFixed(6)));
  };
  const line = (name: string, color: string, data: number[], dashed = false) => ({
    type: 'line',
    name,
    showSymbol: false,
    lineStyle: { color, width: 2, type: dashed ? 'dashed' : 'solid' },
    itemStyle: { color },
    data,
  });
  const labels = priced.map(label);
  return renderSvg(
    {
      legend,
      grid: { left: 80, right: 30, top: 40, bottom: labels.length > 12 ? 80 : 40 },
      xAxis: { type: 'category', data: labels, boundaryGap: false, axisLabel: categoryLabels(labels.length) },
      yAxis: { type: 'value', name: 'USD, cumulative', axisLabel: { formatter: (v: number) => `$${v.toFixed(3)}` } },
      series: [
        line(
          'actual',
          COLORS.actual,
          cumulative((r) => r.costUsd!),
        ),
        line(
          'no cache',
          COLORS.noCache,
          cumulative((r) => r.noCacheUsd!),
          true,
        ),
      ],
    },
    { width: WIDTH, height: 340 },
  );
}

/** Each fan-out's hit ratio against its theoretical maximum. */
export function hitChart(fanouts: readonly ProxyFanOutSummary[]): string {
  const pct = (v: number): number => Number((100 * v).toFixed(2));
  return renderSvg(
    {
      legend,
      grid: { left: 70, right: 30, top: 40, bottom: 40 },
      xAxis: { type: 'category', data: fanouts.map((f) => f.id), axisLabel: categoryLabels(fanouts.length) },
      yAxis: { type: 'value', name: 'cache hit ratio, %', min: 0, max: 100 },
      series: [
        {
          type: 'bar',
          name: 'hit ratio',
          itemStyle: { color: COLORS.read },
          data: fanouts.map((f) => pct(f.hit_ratio)),
        },
        {
          type: 'line',
          name: 'theoretical maximum',
          symbol: 'rect',
          symbolSize: 10,
          lineStyle: { opacity: 0 },
          itemStyle: { color: COLORS.ceiling },
          data: fanouts.map((f) => pct(f.max_hit_ratio)),
        },
      ],
    },
    { width: WIDTH, height: 300 },
  );
}
