import type { RunModel } from './run-types.ts';
import type { RunEventOf } from '../../core/run-dir/schemas.ts';
import { COLORS, renderSvg } from './svg-chart.ts';

const KINDS = [
  ['rpm', 'requests (RPM)', COLORS.actual],
  ['itpm', 'input tokens (ITPM)', COLORS.written],
  ['otpm', 'output tokens (OTPM)', COLORS.fresh],
] as const;

/**
 * The rate-limit budget over time (the `budget` lines of events.jsonl, one a second at most):
 * what each bucket is short of full, as a share of its per-minute limit, against the limit
 * (100%), and the requests queued for a permit. Undefined when the run logged no budget
 * with known limits (no rate-limit headers came back).
 */
export function budgetChart(model: RunModel): string | undefined {
  const samples = model.files.events.filter((e): e is RunEventOf<'budget'> => e.type === 'budget');
  const start = model.files.events.find((e) => e.type === 'fanout-start')?.at ?? 0;
  const first = samples
    .flatMap((s) => s.classes)
    .find((c) => c.limits.rpm !== undefined || c.limits.itpm !== undefined);
  if (!first) return undefined;
  const modelClass = first.modelClass;
  const points = samples
    .map((s) => ({ at: s.at - start, waiting: s.waiting, c: s.classes.find((c) => c.modelClass === modelClass) }))
    .filter((p) => p.c);
  const share = (used: number, limit: number | undefined | null): number | null =>
    limit ? Math.round((1000 * used) / limit) / 10 : null;
  return renderSvg(
    {
      legend: { top: 0, type: 'plain' },
      grid: { left: 70, right: 70, top: 40, bottom: 40 },
      xAxis: { type: 'value', name: 'ms since the fan-out started', nameLocation: 'middle', nameGap: 26 },
      yAxis: [
        {
          type: 'value',
          name: '% of the limit',
          max: (v: { max: number }) => Math.max(110, Math.ceil(v.max / 10) * 10),
        },
        { type: 'value', name: 'queued', position: 'right', minInterval: 1 },
      ],
      series: [
        ...KINDS.map(([key, name, color], i) => ({
          type: 'line',
          step: 'end',
          name,
          showSymbol: false,
          itemStyle: { color },
          data: points.map((p) => [p.at, share(p.c!.used[key], p.c!.limits[key])]),
          ...(i === 0
            ? {
                markLine: {
                  symbol: 'none',
                  silent: true,
                  label: { formatter: 'limit' },
                  lineStyle: { color: COLORS.uncached, type: 'dashed' },
                  data: [{ yAxis: 100 }],
                },
              }
            : {}),
        })),
        {
          type: 'line',
          step: 'end',
          name: 'requests queued',
          yAxisIndex: 1,
          showSymbol: false,
          itemStyle: { color: COLORS.ceiling },
          lineStyle: { type: 'dotted' },
          data: points.map((p) => [p.at, p.waiting]),
        },
      ],
    },
    { width: 960, height: 320 },
  );
}
