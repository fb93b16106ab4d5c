import { addUsage, totalInputTokens, type Usage, ZERO_USAGE } from '../../core/ledger/usage.ts';
import { binLabel, bins, MAX_CATEGORIES } from './bins.ts';
import { hitRatio } from './run-model.ts';
import { type RunModel, PHASES, type Phase, type Segment } from './run-types.ts';
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

/** Past this many rows the timeline counts forks by phase instead of drawing a row each. */
export const TIMELINE_MAX_ROWS = 100;

/**
 * Per-fork timeline from events.jsonl: one row per fork, one coloured span per phase; rows
 * thin out past 40 forks (every k-th labelled). Past TIMELINE_MAX_ROWS: `phaseCountChart`.
 */
export function timelineChart(model: RunModel): string {
  if (model.rows.length > TIMELINE_MAX_ROWS) return phaseCountChart(model);
  const rowHeight = model.rows.length <= MAX_CATEGORIES ? 24 : 12;
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
      yAxis: {
        type: 'category',
        data: model.rows,
        inverse: true,
        axisLabel: { fontSize: rowHeight < 24 ? 9 : 11, interval: rowHeight < 24 ? 1 : 0 },
      },
      series: [...series, ...passMarks(model)],
    },
    { width: WIDTH, height: 90 + rowHeight * model.rows.length },
  );
}

// Priority when spans overlap at an instant: a request or the warm-up wait sits inside `running`.
const PHASE_RANK: Record<Phase, number> = { request: 4, warming: 3, running: 2, queued: 1, done: 0 };

/** How many forks are in each phase over time, stacked: what a timeline of hundreds of rows says, at any N. */
function phaseCountChart(model: RunModel): string {
  const samples = 240;
  const step = Math.max(1, model.durationMs) / samples;
  const byRow = new Map<string, Segment[]>();
  for (const seg of model.segments) byRow.set(seg.row, [...(byRow.get(seg.row) ?? []), seg]);
  const counts = PHASES.map(() => new Array<number>(samples + 1).fill(0));
  for (const segs of byRow.values()) {
    for (let i = 0; i <= samples; i++) {
      const t = i * step;
      let best: Phase | undefined;
      for (const seg of segs)
        if (seg.start <= t && t <= seg.end && (best === undefined || PHASE_RANK[seg.phase] > PHASE_RANK[best]))
          best = seg.phase;
      if (best) counts[PHASES.indexOf(best)]![i]! += 1;
    }
  }
  const order: Phase[] = ['request', 'warming', 'running', 'queued', 'done'];
  return renderSvg(
    {
      legend: { ...legend, data: order.map((p) => PHASE_LABELS[p]) },
      grid: { left: 70, right: 30, top: 40, bottom: 50 },
      xAxis: {
        type: 'value',
        name: 'ms since the fan-out started',
        nameLocation: 'middle',
        nameGap: 26,
        max: Math.ceil(model.durationMs),
      },
      yAxis: { type: 'value', name: `forks (of ${model.rows.length})`, max: model.rows.length },
      series: [
        ...order.map((phase) => ({
          type: 'line',
          name: PHASE_LABELS[phase],
          stack: 'phases',
          showSymbol: false,
          lineStyle: { width: 0 },
          itemStyle: { color: COLORS[phase] },
          areaStyle: { color: COLORS[phase], opacity: 1 },
          data: counts[PHASES.indexOf(phase)]!.map((c, i) => [Math.round(i * step), c]),
        })),
        ...passMarks(model),
      ],
    },
    { width: WIDTH, height: 360 },
  );
}

/** A vertical mark where each later pass of a resumed run began (none for a run of one pass). */
function passMarks(model: RunModel): Record<string, unknown>[] {
  if (model.files.passes.length <= 1) return [];
  return [
    {
      type: 'line',
      name: 'pass',
      data: [],
      markLine: {
        symbol: 'none',
        silent: true,
        lineStyle: { color: '#212529', type: 'dashed', width: 1 },
        label: { formatter: '{b}', position: 'insideEndTop', fontSize: 10 },
        data: model.files.passes
          .slice(1)
          .map((s) => ({ xAxis: Math.round(s.startMs), name: `pass ${s.index} (resume)` })),
      },
    },
  ];
}

/**
 * Input tokens, stacked as read from cache / written to cache / uncached: of every request up
 * to MAX_CATEGORIES of them, else of every fork (its requests together), groups of forks past
 * MAX_CATEGORIES forks.
 */
export function tokensChart(model: RunModel): string {
  if (model.requests.length <= MAX_CATEGORIES) return inputTokensChart(model.requests);
  const perFork = new Map<string, { label: string; usage: Usage }>();
  for (const r of model.requests) {
    const key = r.forkId ?? r.label;
    const row = perFork.get(key) ?? { label: r.forkId ? shortOf(r.label) : r.label, usage: ZERO_USAGE as Usage };
    row.usage = addUsage(row.usage, r.usage);
    perFork.set(key, row);
  }
  const order = new Map(model.forks.map((f, i) => [f.forkId, i]));
  const points = [...perFork.entries()]
    .sort(([a], [b]) => (order.get(a) ?? -1) - (order.get(b) ?? -1))
    .map(([, p]) => p);
  return inputTokensChart(points, 'fork');
}

/** `f03 t2` → `f03`. */
const shortOf = (label: string): string => label.split(' ')[0]!;

/**
 * The `fresh_agents` baseline per request: the ledger gives only its total, which differs from
 * the actual cost on the requests a fresh agent replaces (src/core/ledger/fresh-agents.ts: every
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
    data: cumulative(values).map((v, i) => [i + 1, v]),
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
  // a value axis of request numbers: at hundreds of requests a label each would overlap into ink
  return renderSvg(
    {
      legend,
      grid: { left: 80, right: 30, top: 40, bottom: 50 },
      xAxis: {
        type: 'value',
        name: `requests in the order sent (1–${model.requests.length})`,
        nameLocation: 'middle',
        nameGap: 26,
        min: 1,
        max: Math.max(2, model.requests.length),
        minInterval: 1,
      },
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
  const order = new Map(model.forks.map((f, i) => [f.forkId, i]));
  // in fork order (the warm-up first): pooled groups are then runs of neighbouring forks
  const fanout = model.requests
    .filter((r) => r.kind === 'warmup' || r.turn === 1)
    .sort((a, b) => (a.forkId ? (order.get(a.forkId) ?? 0) : -1) - (b.forkId ? (order.get(b.forkId) ?? 0) : -1));
  // past MAX_CATEGORIES requests, consecutive ones are pooled (their reads over their input)
  const groups = bins(fanout, MAX_CATEGORIES - 1);
  const size = groups[0]?.length ?? 1;
  const labels = groups.map((g) => binLabel(g.map((r) => (size > 1 ? shortOf(r.label) : r.label))));
  const pooled = groups.map((g) => g.reduce((u, r) => addUsage(u, r.usage), ZERO_USAGE as Usage));
  const actual = pooled.map((u) => hitRatio(u));
  const ceiling = pooled.map((u, i) =>
    shared === null ? null : Math.min(1, (shared * groups[i]!.length) / Math.max(1, totalInputTokens(u))),
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
      grid: { left: 70, right: 30, top: 40, bottom: labels.length > 12 ? 100 : 50 },
      xAxis: {
        type: 'category',
        data: labels,
        axisLabel: categoryLabels(labels.length),
        name: size > 1 ? `fan-out requests, ${size} a bar (pooled)` : 'fan-out requests',
        nameLocation: 'middle',
        nameGap: labels.length > 12 ? 70 : 26,
      },
      yAxis: { type: 'value', name: 'cache hit ratio, %', min: 0, max: 100 },
      series,
    },
    { width: WIDTH, height: 300 },
  );
}
