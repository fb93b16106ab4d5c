import { addUsage, type Usage, ZERO_USAGE } from '../../core/ledger/usage.ts';
import { binLabel, bins } from './bins.ts';
import { COLORS, renderSvg } from './svg-chart.ts';

/** Width of every report chart, and the legend and category-axis styles they share. */
export const CHART_WIDTH = 960;
export const chartLegend = { top: 0, type: 'plain' };
export const categoryLabels = (count: number) => ({ rotate: count > 12 ? 60 : 0, fontSize: 10, interval: 0 });

/**
 * Input tokens of every point (a request, or a fork's requests together), stacked as read from
 * cache / written to cache / uncached: the same chart in a run report and in the proxy's
 * report. Past MAX_CATEGORIES points, consecutive points are summed into groups (`f001–f013`)
 * and the axis says so.
 */
export function inputTokensChart(all: readonly { label: string; usage: Usage }[], unit = 'request'): string {
  const groups = bins(all);
  const points = groups.map((g) => ({
    label: binLabel(g.map((p) => p.label)),
    usage: g.reduce((u, p) => addUsage(u, p.usage), ZERO_USAGE as Usage),
  }));
  const size = groups[0]?.length ?? 1;
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
      grid: { left: 70, right: 30, top: 40, bottom: labels.length > 12 ? 100 : 50 },
      xAxis: {
        type: 'category',
        data: labels,
        axisLabel: categoryLabels(labels.length),
        name: size > 1 ? `${size} ${unit}s a bar` : `one ${unit} a bar`,
        nameLocation: 'middle',
        nameGap: labels.length > 12 ? 70 : 26,
      },
      yAxis: { type: 'value', name: size > 1 ? `input tokens (sum of ${size} ${unit}s)` : 'input tokens' },
      series: [
        bar('cache read', COLORS.read, (u) => u.cache_read_input_tokens),
        bar('cache written', COLORS.written, (u) => u.cache_creation_input_tokens),
        bar('uncached', COLORS.uncached, (u) => u.input_tokens),
      ],
    },
    { width: CHART_WIDTH, height: 340 },
  );
}
