import { totalInputTokens } from '../ledger/usage.ts';
import { type RunModel, hitRatio, PHASES, type Phase } from './run-model.ts';
import { COLORS, renderSvg } from './svg-chart.ts';
import { CHART_WIDTH as WIDTH, categoryLabels, chartLegend as legend, inputTokensChart } from './tokens-chart.ts';

const PHASE_LABELS: Record<Phase, string> = {
  queued: 'queued',
  warming: 'warming (1st request held)',
  running: 'running (tools, worker)',
  request: 'model request',
  done: 'done',
};

interface RenderApi {
  value(dimension: number): number;
  coord(point: [number, number]): [number, number];
  size(point: [number, number]): [number, number];
}

/** Per-fork timeline from events.jsonl: one row per fork, one coloured span per phase. */
export function timelineChart(model: RunModel): string {
  const rowIndex = new Map(model.rows.map((r, i) => [r, i]));
  // Drawn in this order, so warming and model requests sit on top of the `running` span.
  const drawOrder: Phase[] = ['queued', 'running', 'warming', 'request', 'done'];
  const series = drawOrder.map((phase) => ({
    type: 'custom',
    name: PHASE_LABELS[phase],
    itemStyle: { color: COLORS[phase] },
    encode: { x: [1, 2], y: 0 },
    data: model.segments
      .filter((s) => s.phase === phase && s.end >= s.start)
      .map((s) => [rowIndex.get(s.row), s.start, s.end]),
    renderItem: (_params: unknown, api: RenderApi) => {
      const row = api.value(0);
      const from = api.coord([api.value(1), row]);
      const to = api.coord([api.value(2), row]);
      const height = api.size([0, 1])[1] * (phase === 'request' || phase === 'warming' ? 0.7 : 0.45);
      return {
        type: 'rect',
        shape: { x: from[0], y: from[1] - height / 2, width: Math.max(1, to[0] - from[0]), height },
        style: { fill: COLORS[phase] },
      };
    },
  }));
  return renderSvg(
    {
      legend: { ...legend, data: PHASES.map((p) => PHASE_LABELS[p]) },
      grid: { left: 70, right: 30, top: 40, bottom: 40 },
      xAxis: {
        type: 'value',
        name: 'ms since the fan-out started',
        nameLocation: 'middle',
        nameGap: 26,
        max: Math.max(1, Math.ceil(model.durationMs)),
      },
      yAxis: { type: 'category', data: model.rows, inverse: true, axisLabel: { fontSize: 11 } },
      series,
    },
    { width: WIDTH, height: 90 + 24 * model.rows.length },
  );
}

/** Input tokens of every request, stacked as read from cache / written to cache / uncached. */
export function tokensChart(model: RunModel): string {
  return inputTokensChart(model.requests);
}

/**
 * The `fresh_agents` baseline per request: the ledger gives only its total, which differs from
 * the actual cost on the requests a fresh agent replaces (src/ledger/fresh-agents.ts: every
 * fork request, and the warm-ups, which it drops). Each of those is scaled by the same factor;
 * the curve's end point is the ledger's own figure for these requests.
 */
function freshPerRequest(model: RunModel): number[] | undefined {
  const summary = model.files.summary;
  const fresh = summary?.cost_usd.fresh_agents;
  const actual = summary?.cost_usd.actual;
  if (fresh === null || fresh === undefined || actual === null || actual === undefined || !summary) return undefined;
  const replaced = (r: RunModel['requests'][number]): boolean => r.kind === 'warmup' || r.kind === 'fork';
  const sum = model.requests.filter(replaced).reduce((total, r) => total + (r.cost ?? 0), 0);
  if (sum === 0) return undefined;
  const factor = (fresh - actual + sum) / sum;
  return model.requests.map((r) => (replaced(r) ? (r.cost ?? 0) * factor : (r.cost ?? 0)));
}

function cumulative(values: number[]): number[] {
  let sum = 0;
  return values.map((v) => Number((sum += v).toFixed(6)));
}

/** Cumulative cost of the fan-out's requests, in the order sent, against the two baselines. */
export function costChart(model: RunModel): string | undefined {
  if (model.requests.length === 0 || model.requests.some((r) => r.cost === undefined)) return undefined;
  const line = (name: string, color: string, values: number[], dashed = false) => ({
    type: 'line',
    name,
    showSymbol: false,
    lineStyle: { color, width: 2, type: dashed ? 'dashed' : 'solid' },
    itemStyle: { color },
    data: cumulative(values),
  });
  const series = [
    line(
      'actual',
      COLORS.actual,
      model.requests.map((r) => r.cost!),
    ),
    line(
      'no cache',
      COLORS.noCache,
      model.requests.map((r) => r.noCache!),
      true,
    ),
  ];
  const fresh = freshPerRequest(model);
  if (fresh) series.push(line('fresh agents', COLORS.fresh, fresh, true));
  const labels = model.requests.map((r) => r.label);
  return renderSvg(
    {
      legend,
      grid: { left: 80, right: 30, top: 40, bottom: labels.length > 12 ? 80 : 40 },
      xAxis: { type: 'category', data: labels, boundaryGap: false, axisLabel: categoryLabels(labels.length) },
      yAxis: { type: 'value', name: 'USD, cumulative', axisLabel: { formatter: (v: number) => `$${v.toFixed(3)}` } },
      series,
    },
    { width: WIDTH, height: 340 },
  );
}

/**
 * Hit ratio of each fan-out request against its ceiling (every shared prefix token read), and
 * of the whole fan-out against the ledger's `max_fanout_reads`, which also subtracts the
 * shared tokens that were not cached yet and had to be written once.
 */
export function hitChart(model: RunModel): string {
  const summary = model.files.summary;
  const shared = summary?.prefix.shared_tokens ?? null;
  const fanout = model.requests.filter((r) => r.kind === 'warmup' || r.turn === 1);
  const labels = fanout.map((r) => r.label);
  const actual = fanout.map((r) => hitRatio(r.usage));
  const ceiling = fanout.map((r) =>
    shared === null ? null : Math.min(1, shared / Math.max(1, totalInputTokens(r.usage))),
  );
  if (summary) {
    labels.push('fan-out');
    actual.push(summary.cache.fanout_hit_ratio);
    ceiling.push(
      summary.cache.fanout_input_tokens === 0
        ? null
        : summary.cache.max_fanout_reads / summary.cache.fanout_input_tokens,
    );
  }
  const pct = (v: number | null): number | null => (v === null ? null : Number((100 * v).toFixed(2)));
  const series: Record<string, unknown>[] = [
    { type: 'bar', name: 'hit ratio', itemStyle: { color: COLORS.read }, data: actual.map(pct) },
  ];
  if (ceiling.some((c) => c !== null)) {
    series.push({
      type: 'line',
      name: 'theoretical maximum',
      symbol: 'rect',
      symbolSize: 10,
      lineStyle: { opacity: 0 },
      itemStyle: { color: COLORS.ceiling },
      data: ceiling.map(pct),
    });
  }
  return renderSvg(
    {
      legend,
      grid: { left: 70, right: 30, top: 40, bottom: labels.length > 12 ? 80 : 40 },
      xAxis: { type: 'category', data: labels, axisLabel: categoryLabels(labels.length) },
      yAxis: { type: 'value', name: 'cache hit ratio, %', min: 0, max: 100 },
      series,
    },
    { width: WIDTH, height: 300 },
  );
}
