import { escapeHtml, figure, page, table } from './html.ts';
import { forkTable, notDoneReason, notDoneSection } from './fork-table.ts';
import { costChart, hitChart, TIMELINE_MAX_ROWS, timelineChart, tokensChart } from './run-charts.ts';
import { MAX_CATEGORIES } from './bins.ts';
import { budgetChart } from './budget-chart.ts';
import type { RunModel } from './run-types.ts';
import { BASELINES_NOTE, savedAgainst } from '../../core/ledger/baseline-words.ts';
import { fanOutSharedReads } from '../../core/ledger/summary.ts';

const n = (x: number): string => x.toLocaleString('en-US');
const usd = (x: number | null | undefined): string => (x === null || x === undefined ? 'n/a' : `$${x.toFixed(4)}`);
const percent = (x: number | null | undefined): string =>
  x === null || x === undefined ? 'n/a' : `${(100 * x).toFixed(1)}%`;

function overview(model: RunModel): string {
  const s = model.files.summary;
  const m = model.files.manifest;
  const rows: (string | number)[][] = [
    ['prefix sha256', m.prefix.sha256],
    [
      'prefix size',
      `${n(m.prefix.bytes)} bytes${s?.prefix.shared_tokens != null ? `, ${n(s.prefix.shared_tokens)} tokens shared` : ''}`,
    ],
    ['layout, cache lifetime', `${m.prefix.layout ?? 'n/a'}, ${m.prefix.ttl ?? 'n/a'}`],
  ];
  if (s) {
    rows.push(
      ['forks', forksLine(model)],
      [
        'fan-out hit ratio',
        `${percent(s.cache.fanout_hit_ratio)} (theoretical maximum ${s.cache.fanout_input_tokens === 0 ? 'n/a' : percent(s.cache.max_fanout_reads / s.cache.fanout_input_tokens)})`,
      ],
      [
        'cache efficiency',
        `${s.cache.cache_efficiency.toFixed(3)} (read ${n(fanOutSharedReads(s.cache))} of at most ${n(s.cache.max_fanout_reads)})`,
      ],
      [
        'cost (whole tree)',
        `actual ${usd(s.cost_usd.actual)} | no cache ${usd(s.cost_usd.no_cache)} (${savedAgainst(s.savings.vs_no_cache)}) | fresh agents ${usd(s.cost_usd.fresh_agents)} (${savedAgainst(s.savings.vs_fresh_agents)})`,
      ],
      ['baselines', BASELINES_NOTE],
      ['warm-ups, drift events', `${s.warmups ?? 'n/a'}, ${s.prefix.drift_events}`],
      [
        'prices',
        `model catalogue of ${s.model_table_date ?? 'n/a'}${s.unpriced && s.unpriced.requests > 0 ? `; ${n(s.unpriced.requests)} requests unpriced (${s.unpriced.models.join(', ')}): price them with --model-table FILE` : ''}`,
      ],
    );
    for (const warning of s.warnings ?? []) rows.push(['model', warning]);
    if (s.prefix.source === 'fallback')
      rows.push(['sharing', 'no parent snapshot: fallback prompt, nothing shared with a parent']);
  }
  return table(['', ''], rows, 'overview');
}

/** Forks by status, as the files say (any status, not a fixed list), and how many did not do their directive. */
function forksLine(model: RunModel): string {
  const byStatus = new Map<string, number>();
  for (const f of model.forks) byStatus.set(f.status, (byStatus.get(f.status) ?? 0) + 1);
  const notDone = model.forks.filter((f) => notDoneReason(f) !== undefined).length;
  const statuses = [...byStatus].map(([status, count]) => `${count} ${status}`).join(', ');
  return `${model.forks.length} total: ${statuses}; ${model.forks.length - notDone} done, ${notDone} not done`;
}

/** At most 20 lines, then how many more: hundreds of forks can miss the same way. */
function capped(items: string[], max = 20): string[] {
  return items.length <= max ? items : [...items.slice(0, max), `… and ${items.length - max} more like these`];
}

function list(items: string[], empty: string): string {
  if (items.length === 0) return `<p class="ok">${escapeHtml(empty)}</p>`;
  return `<ul class="diagnostics">${items.map((d) => `<li>${escapeHtml(d)}</li>`).join('')}</ul>`;
}

/** The rate-limit budget over time, when the run met an API that sends rate-limit headers. */
function rateLimitSection(model: RunModel): string[] {
  const chart = budgetChart(model);
  if (!chart) return [];
  const r = model.files.summary?.['rate_limits'] as
    { http_429?: number; http_529?: number; stopped?: string | null } | undefined;
  const counts = r
    ? ` This run met ${r.http_429 ?? 0} 429s and ${r.http_529 ?? 0} 529s${r.stopped ? `, and stopped at the spend cap (${r.stopped})` : ''}.`
    : '';
  return [
    '<h3>Rate-limit budget</h3>',
    figure(
      'budget',
      chart,
      `What each rate-limit bucket is short of full, as a share of its per-minute limit (learned from the API's headers), against the limit, and the requests queued for a permit (right axis).${counts}`,
    ),
  ];
}

/** One fan-out's section: overview, diagnostics, the four charts, the fork table. */
function runSection(model: RunModel): string {
  const start = model.files.events.find((e) => e.type === 'fanout-start')!.at;
  const cost = costChart(model);
  return [
    `<section class="fanout" data-fanout="${escapeHtml(model.id)}">`,
    `<h2>Fan-out ${escapeHtml(model.id)}</h2>`,
    `<p class="meta">${escapeHtml(model.files.dir)} · started ${escapeHtml(new Date(start).toISOString())} · ${n(Math.round(model.durationMs))} ms · ${model.forks.length} forks${model.files.model ? ` of ${escapeHtml(model.files.model)}` : ''}</p>`,
    notDoneSection(model),
    overview(model),
    '<h3>Drift and cache-miss diagnostics</h3>',
    list(capped(model.diagnostics), 'No drift; every fan-out request read the shared prefix it could.'),
    model.files.notes.length > 0 ? `<h3>Notes</h3>${list(model.files.notes, '')}` : '',
    '<h3>Timeline</h3>',
    figure(
      'timeline',
      timelineChart(model),
      model.rows.length > TIMELINE_MAX_ROWS
        ? `How many of the ${model.forks.length} forks are in each phase over time (from events.jsonl; a row per fork would not read at this size): queued for a worker slot, warming (first request held at the warm-first gate), running (tools, worker), in a model request, done.`
        : 'Per fork, from events.jsonl: queued until a worker slot is free, warming while its first request is held (at the warm-first gate until the shared entry is readable, and by the API concurrency limit), model requests (dark) within its running time, done after it reported.',
    ),
    '<h3>Tokens per request</h3>',
    figure(
      'tokens',
      tokensChart(model),
      model.requests.length <= MAX_CATEGORIES
        ? 'Input tokens of every request in the order sent (fork and turn), stacked: read from cache, written to cache, uncached.'
        : `Input tokens of every fork's requests together (${model.requests.length} requests: one bar each would not read), in fork order${model.forks.length > MAX_CATEGORIES ? ', neighbouring forks summed into one bar' : ''}; stacked: read from cache, written to cache, uncached.`,
    ),
    '<h3>Cumulative cost</h3>',
    cost
      ? figure(
          'cost',
          cost,
          "The fan-out requests priced from the model table, cumulated in the order sent, against the same requests without caching and as fresh agents (the ledger's fresh-agent total for these requests, its difference spread evenly over the forks' first requests). The whole tree's totals are in the table above.",
        )
      : '<p><em>Requests are not priced (no model, or a model missing from the table).</em></p>',
    '<h3>Hit ratio against the theoretical maximum</h3>',
    figure(
      'hit-ratio',
      hitChart(model),
      'Cache reads over all input tokens for each fan-out request, and for the whole fan-out; the grey marks are the ceilings (every shared token read; for the fan-out, less the shared tokens that had to be written once).',
    ),
    ...rateLimitSection(model),
    '<h3>Forks</h3>',
    forkTable(model),
    '</section>',
  ].join('\n');
}

/** The whole page for one or more fan-outs; `scope` says which were rendered and why. */
export function renderRunReport(models: RunModel[], scope: string): string {
  const title =
    models.length === 1 ? `forkcache report: ${models[0]!.id}` : `forkcache report: ${models.length} fan-outs`;
  const body = [
    `<h1>${escapeHtml(title)}</h1>`,
    `<p class="meta">${escapeHtml(scope)}</p>`,
    ...models.map(runSection),
  ].join('\n');
  return page(title, body);
}
