import { writeFileSync } from 'node:fs';
import { escapeHtml, figure, page, raw, table } from '../../report/html.ts';
import type { ProxyFanOutSummary } from './ledger.ts';
import { costChart, hitChart, timelineChart, tokensChart } from './charts.ts';
import type { ProxySummary } from './summary.ts';
import type { ExchangeRecord } from '../diagnosis/types.ts';

const n = (x: number): string => x.toLocaleString('en-US');
const usd = (x: number | null | undefined): string => (x === null || x === undefined ? 'n/a' : `$${x.toFixed(4)}`);
const percent = (x: number): string => `${(100 * x).toFixed(1)}%`;
/** Requests listed one by one at most (the charts and totals cover all the ledger kept). */
const LISTED = 500;

function overview(s: ProxySummary): string {
  const saved = s.cost_usd.no_cache === 0 ? 0 : s.cost_usd.saved_vs_no_cache / s.cost_usd.no_cache;
  return table(
    ['', ''],
    [
      ['upstream', s.upstream],
      [
        'requests',
        `${n(s.requests.total)} (${n(s.requests.errors)} failed), ${s.sessions.length} session(s), ${s.fanouts.length} fan-out(s)`,
      ],
      [
        'tokens',
        `read ${n(s.usage.cache_read_input_tokens)}, written ${n(s.usage.cache_creation_input_tokens)}, uncached ${n(s.usage.input_tokens)}, output ${n(s.usage.output_tokens)}; hit ratio ${percent(s.cache.hit_ratio)}`,
      ],
      [
        'cost',
        `actual ${usd(s.cost_usd.actual)} | no cache ${usd(s.cost_usd.no_cache)} (saved ${percent(saved)})${s.cost_usd.unpriced_requests > 0 ? `; ${n(s.cost_usd.unpriced_requests)} request(s) unpriced (model not in the catalogue)` : ''}`,
      ],
      [
        'options',
        `--warm-first ${s.options.warm_first ? 'on' : 'off'}, --strip-billing-block ${s.options.strip_billing_block ? 'on' : 'off'}`,
      ],
    ],
    'overview',
  );
}

function savedByProxy(s: ProxySummary): string {
  return table(
    ['fix', 'requests', 'saved (USD)', 'how it is counted'],
    [
      [
        '--warm-first',
        `${n(s.requests.held)} held`,
        usd(s.saved_by_proxy_usd.warm_first),
        'each held request read the prefix a sibling was writing; without the hold it would have written those tokens itself',
      ],
      [
        '--strip-billing-block',
        `${n(s.requests.stripped_billing_block)} stripped`,
        usd(s.saved_by_proxy_usd.strip_billing_block),
        'each stripped request read an entry written under another billing block; kept, the block would have missed it',
      ],
      ['total', '', usd(s.saved_by_proxy_usd.total), ''],
    ],
    'saved',
  );
}

function fanoutSection(f: ProxyFanOutSummary): string {
  const head = `<h3>${escapeHtml(f.id)}: ${f.requests} requests</h3><p class="meta">shared prefix about ${n(f.shared_tokens)} tokens · hit ratio ${percent(f.hit_ratio)} (theoretical maximum ${percent(f.max_hit_ratio)}) · cache efficiency ${f.cache_efficiency.toFixed(3)} (read ${n(Math.round(f.cache_efficiency * f.max_reads))} of at most ${n(f.max_reads)}) · cost ${usd(f.cost_usd)} against ${usd(f.no_cache_usd)} without caching</p>`;
  const rows = f.members.map((m) => [
    `#${m.seq}`,
    m.label ? `${m.kind ?? ''}: ${m.label}` : (m.kind ?? ''),
    m.thread ?? '',
    m.read,
    m.written,
    m.uncached,
    percent(m.hit_ratio),
    m.warm ?? '',
    m.reason ?? '',
  ]);
  return (
    head +
    table(
      ['request', 'kind', 'thread', 'read', 'written', 'uncached', 'hit ratio', 'warm-first', 'diagnosis'],
      rows,
      'forks',
    )
  );
}

function diagnoses(records: readonly ExchangeRecord[]): string {
  const misses = records
    .filter((r) => r.diagnosis && r.diagnosis.reason !== 'read' && r.diagnosis.reason !== 'new_prefix')
    .slice(-LISTED);
  if (misses.length === 0) return '<p class="ok">Every request read what an earlier request had cached for it.</p>';
  const items = misses.map(
    (r) =>
      `<li><strong>#${r.seq}</strong> <code>${escapeHtml(r.diagnosis!.reason)}</code>${r.diagnosis!.firstDiff ? ` (first differing block ${escapeHtml(r.diagnosis!.firstDiff.path)})` : ''}: ${escapeHtml(r.diagnosis!.detail)}${r.diagnosis!.missedTokens > 0 ? `; about ${n(r.diagnosis!.missedTokens)} tokens not read` : ''}${r.apiMissReason ? `; API: <code>${escapeHtml(JSON.stringify(r.apiMissReason))}</code>` : ''}</li>`,
  );
  return `<ul class="diagnostics">${items.join('')}</ul>`;
}

function requestTable(records: readonly ExchangeRecord[]): string {
  const rows = records
    .slice(-LISTED)
    .map((r) => [
      `#${r.seq}`,
      `${r.method} ${r.path}`,
      r.status ?? raw('<span class="status-failed">none</span>'),
      r.model ?? '',
      r.session ?? '',
      r.fanout ?? '',
      r.ttfbMs === undefined ? '' : Math.round(r.ttfbMs),
      r.usage?.cache_read_input_tokens ?? '',
      r.usage?.cache_creation_input_tokens ?? '',
      r.usage?.input_tokens ?? '',
      usd(r.costUsd),
      r.error ?? r.diagnosis?.reason ?? '',
    ]);
  return table(
    [
      'request',
      'route',
      'status',
      'model',
      'session',
      'fan-out',
      'TTFB ms',
      'read',
      'written',
      'uncached',
      'cost',
      'diagnosis / error',
    ],
    rows,
    'bench',
  );
}

/** The proxy's HTML report: the same page, charts and colours as a forkcache run's report. */
export function renderProxyReport(summary: ProxySummary, records: readonly ExchangeRecord[]): string {
  const title = 'forkcache proxy report';
  const withUsage = records.filter((r) => r.usage);
  const cost = costChart(records);
  const body = [
    `<h1>${title}</h1>`,
    `<p class="meta">${escapeHtml(summary.started_at)} → ${escapeHtml(summary.ended_at)} · ${n(records.length)} requests shown</p>`,
    overview(summary),
    '<h2>Saved by the proxy</h2>',
    savedByProxy(summary),
    '<h2>Fan-outs</h2>',
    summary.fanouts.length === 0
      ? '<p><em>No fan-out seen (no two requests branched from one shared prefix).</em></p>'
      : figure(
          'hit-ratio',
          hitChart(summary.fanouts),
          "Cache reads over all input tokens of each fan-out's requests; the grey marks are the ceilings (every member reads the shared prefix, less one write of it when the fan-out started cold).",
        ) + summary.fanouts.map(fanoutSection).join('\n'),
    '<h2>Cache-miss diagnostics</h2>',
    diagnoses(records),
    '<h2>Timeline</h2>',
    records.length === 0
      ? '<p><em>No requests.</em></p>'
      : figure(
          'timeline',
          timelineChart(records.slice(-LISTED)),
          "Per request: held at the warm-first gate, waiting for the upstream's first byte, then the response streaming back.",
        ),
    '<h2>Tokens per request</h2>',
    withUsage.length === 0
      ? '<p><em>No usage recorded.</em></p>'
      : figure(
          'tokens',
          tokensChart(withUsage.slice(-LISTED)),
          'Input tokens of every request in the order received, stacked: read from cache, written to cache, uncached.',
        ),
    '<h2>Cumulative cost</h2>',
    cost
      ? figure(
          'cost',
          cost,
          'Requests priced from the model catalogue at their date, cumulated in the order received, against the same requests without caching.',
        )
      : '<p><em>No priced requests.</em></p>',
    '<h2>Requests</h2>',
    requestTable(records),
  ].join('\n');
  return page(title, body);
}

/** Write the report; returns its size in bytes. */
export function writeProxyReport(file: string, summary: ProxySummary, records: readonly ExchangeRecord[]): number {
  const html = renderProxyReport(summary, records);
  writeFileSync(file, html);
  return Buffer.byteLength(html);
}
