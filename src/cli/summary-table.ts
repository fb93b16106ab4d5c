import type { FanOutResult } from '../engine/fan-out.ts';
import { costUsd } from '../ledger/cost.ts';
import type { ModelCatalogue } from '../models/catalogue.ts';
import { sumUsage } from '../ledger/usage.ts';

const n = (x: number): string => x.toLocaleString('en-US');
const usd = (x: number | null): string => (x === null ? 'n/a' : `$${x.toFixed(4)}`);
const percent = (x: number | null): string => (x === null ? 'n/a' : `${(100 * x).toFixed(1)}%`);

// A fixed-width table is a dozen lines; a table library would add a dependency for no gain.
function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((cell, i) => (i < 2 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ')).join('\n');
}

/** The ledger of a fan-out as a table plus the cache and cost lines, for the terminal. */
export function formatFanOutResult(result: FanOutResult, model: string, catalogue?: ModelCatalogue): string {
  const rows = [['fork', 'status', 'turns', 'tools', 'cache read', 'written', 'uncached', 'output', 'cost']];
  for (const fork of result.forks) {
    const usage = sumUsage(fork.requests.map((r) => r.usage));
    // Priced request by request: each has its own date (price row) and prompt length (band).
    const costs = fork.requests.map((r) => costUsd(r.usage, model, { at: r.sentAt, ...(catalogue ? { catalogue } : {}) })?.total ?? null);
    const cost = costs.includes(null) ? null : (costs as number[]).reduce((a, b) => a + b, 0);
    rows.push([fork.forkId, fork.status, String(fork.turns), String(fork.toolCalls), n(usage.cache_read_input_tokens), n(usage.cache_creation_input_tokens), n(usage.input_tokens), n(usage.output_tokens), usd(cost)]);
  }
  const s = result.summary;
  rows.push(['tree total', '', '', '', n(s.usage.cache_read_input_tokens), n(s.usage.cache_creation_input_tokens), n(s.usage.input_tokens), n(s.usage.output_tokens), usd(s.cost_usd.actual)]);
  return [
    table(rows),
    '',
    `cache   fan-out hit ratio ${percent(s.cache.fanout_hit_ratio)}, cache efficiency ${s.cache.cache_efficiency.toFixed(3)} (read ${n(s.cache.fanout_cache_read_input_tokens)} of at most ${n(s.cache.max_fanout_reads)}), warm-ups ${s.warmups}`,
    `cost    actual ${usd(s.cost_usd.actual)} | no cache ${usd(s.cost_usd.no_cache)} (saved ${percent(s.savings.vs_no_cache)}) | fresh agents ${usd(s.cost_usd.fresh_agents)} (saved ${percent(s.savings.vs_fresh_agents)})`,
    ...s.warnings.map((w) => `model   ${w}`),
    `prefix  ${s.prefix.sha256.slice(0, 16)}  ${n(s.prefix.bytes)} bytes, ${s.prefix.shared_tokens === null ? 'n/a' : n(s.prefix.shared_tokens)} tokens shared, drift events ${s.prefix.drift_events}${s.prefix.source === 'fallback' ? ' (no parent snapshot: fallback prompt, nothing shared with a parent)' : ''}`,
  ].join('\n');
}

/** The `--json` summary object: the fields the README documents, plus the ledger's detail. */
export function jsonSummary(result: FanOutResult, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const s = result.summary;
  return {
    ...extra,
    forks: { total: s.forks.total, completed: s.forks.completed, failed: s.forks.failed, cancelled: s.forks.cancelled },
    usage: { input_tokens: s.usage.input_tokens, cache_creation_input_tokens: s.usage.cache_creation_input_tokens, cache_read_input_tokens: s.usage.cache_read_input_tokens, output_tokens: s.usage.output_tokens },
    cache: { fanout_hit_ratio: s.cache.fanout_hit_ratio, max_fanout_reads: s.cache.max_fanout_reads, cache_efficiency: s.cache.cache_efficiency, warmups: s.warmups },
    cost_usd: { actual: s.cost_usd.actual, no_cache: s.cost_usd.no_cache, fresh_agents: s.cost_usd.fresh_agents },
    savings: s.savings,
    unpriced: s.unpriced,
    warnings: s.warnings,
    model_table_date: s.model_table_date,
    prefix: { sha256: s.prefix.sha256, bytes: s.prefix.bytes, shared_tokens: s.prefix.shared_tokens, drift_events: s.prefix.drift_events, source: s.prefix.source },
    run_dir: s.run_dir ?? null,
    rate_limits: s.rate_limits,
    fork_results: result.forks.map((f) => ({ id: f.forkId, status: f.status, turns: f.turns, tool_calls: f.toolCalls, files_changed: f.filesChanged, report: f.report ?? null, error: f.error ?? null })),
  };
}
