import type { Usage } from '../ledger/usage.ts';
import { COLORS, renderSvg } from './svg-chart.ts';

/** Width of every report chart, and the legend and category-axis styles they share. */
export const CHART_WIDTH = 960;
export const chartLegend = { top: 0, type: 'plain' };
export const categoryLabels = (count: number) => ({ rotate: count > 12 ? 60 : 0, fontSize: 10, interval: 0 });

/**
 * Input tokens of every request, stacked as read from cache / written to cache / uncached: the
 * same chart in a run report and in the proxy's report.
 */
export function inputTokensChart(points: readonly { label: string; usage: Usage }[]): string {
  const labels = points.map((p) => p.label);
  const bar = (name: string, color: string, pick: (u: Usage) => number) => ({
    type: 'bar',
    stack: 'input',
    name,
    itemStyle: { color },
    data: points.map((p) => pick(p.usage)),
  });
  return renderSvg(
    {
      legend: chartLegend,
      grid: { left: 70, right: 30, top: 40, bottom: labels.length > 12 ? 80 : 40 },
      xAxis: { type: 'category', data: labels, axisLabel: categoryLabels(labels.length) },
      yAxis: { type: 'value', name: 'input tokens' },
      series: [
        bar('cache read', COLORS.read, (u) => u.cache_read_input_tokens),
        bar('cache written', COLORS.written, (u) => u.cache_creation_input_tokens),
        bar('uncached', COLORS.uncached, (u) => u.input_tokens),
      ],
    },
    { width: CHART_WIDTH, height: 340 },
  );
}
