import { hasCode } from '../util/errors.ts';
import { FORK_END_STATUSES, type AgentStatus } from '../util/fork-status.ts';
import { computeBaselines, type Baselines } from './baselines.ts';
import { breakdownToUsd, costNano, addCost, nanoToUsd, zeroCost, type CostBreakdown } from './cost.ts';
import { computeFanOuts } from './fan-out-cache.ts';
import { findModel, type ModelCatalogue } from '../models/catalogue.ts';
import { describeModel } from '../models/status.ts';
import type { LedgerRecord } from './records.ts';
import type { AgentNode } from './tree.ts';
import { type CacheCreationSplit, creationSplit, sumUsage } from './usage.ts';

/** One fan-out's line in the summary's `cache.by_fanout` (snake_case like the rest of the JSON). */
export interface FanOutCacheLine {
  key: string;
  owner_id: string | null;
  requests: number;
  shared_prefix_tokens: number;
  uncached_at_start: number;
  cache_read_input_tokens: number;
  max_fanout_reads: number;
  fanout_hit_ratio: number;
  cache_efficiency: number;
}

/** A plain, JSON-able account of a tree (or one agent's subtree). */
export interface LedgerSummary {
  /** `null` for the whole ledger, else the agent whose subtree this is. */
  root: string | null;
  model_table_date: string;
  requests: number;
  /** Of `requests`, the engine's own warm-ups and probes (kind `warmup`, under the agent that fans out). */
  warmup_requests: number;
  agents: { parent: number; fork: number; fresh: number };
  /** Fork children only (`kind: 'fork'`), by status (every status, zeros included). */
  forks: Record<'total' | AgentStatus, number>;
  usage: {
    input_tokens: number;
    cache_creation_input_tokens: number;
    cache_read_input_tokens: number;
    output_tokens: number;
    /** Writes by lifetime; OpenAI's `ttl_30m_input_tokens` / `ttl_12h_input_tokens` appear when there were such writes. */
    cache_creation: CacheCreationSplit;
  };
  cache: {
    fanouts: number;
    fanout_requests: number;
    fanout_input_tokens: number;
    fanout_cache_read_input_tokens: number;
    fanout_hit_ratio: number;
    max_fanout_reads: number;
    /** 1 when `max_fanout_reads` is 0. */
    cache_efficiency: number;
    by_fanout: FanOutCacheLine[];
  };
  /** Every figure is `null` when some request's model cannot be priced (see `unpriced`). */
  cost_usd: {
    actual: number | null;
    no_cache: number | null;
    /** `null` also when a fork child has no fresh-agent input count. */
    fresh_agents: number | null;
    breakdown: CostBreakdown | null;
  };
  /** One line per model that is deprecated, retired or not in the catalogue (unpriced). */
  warnings: string[];
  /** Requests on models the catalogue does not know: their tokens count, their cost cannot. */
  unpriced: { requests: number; models: string[] };
  /** Fractions of the baseline saved by what actually ran (negative: it cost more). */
  savings: { vs_no_cache: number | null; vs_fresh_agents: number | null };
  /** Fork children lacking `freshInputTokens`. */
  missing_fresh_input: string[];
  /** F of the fresh-agents baseline: the fallback system prompt + tools, in tokens (null: no fork measured it). */
  fresh_head_tokens: number | null;
  /** Why every cost is null although every model is priced (a cost out of range), else null. */
  cost_error: string | null;
}

/**
 * The fan-out requests' reads within the shared prefix: what `cache_efficiency` counts, beside
 * `max_fanout_reads`. `fanout_cache_read_input_tokens` also holds reads past the prefix (a
 * re-sent request reading its own directive), so "read X of at most Y" names this one.
 */
export function fanOutSharedReads(
  cache: Pick<LedgerSummary['cache'], 'cache_efficiency' | 'max_fanout_reads'>,
): number {
  return Math.round(cache.cache_efficiency * cache.max_fanout_reads);
}

function savings(actual: number | null, baseline: number | null): number | null {
  return actual === null || baseline === null || baseline === 0 ? null : (baseline - actual) / baseline;
}

/** A warning per distinct model of the records, as of its first request's date. */
function modelWarnings(records: readonly LedgerRecord[], table: ModelCatalogue): string[] {
  const first = new Map<string, number>();
  for (const r of records) first.set(r.model, Math.min(first.get(r.model) ?? r.at, r.at));
  return [...first].flatMap(([model, at]) => describeModel(model, { catalogue: table, at }).warning ?? []);
}

/**
 * The costs of the scope. A cost past what nano-dollar integers hold (a price or a usage out of
 * range) leaves the figures out with a warning: the summary of work that was done must still be
 * printed, and a run must still end (issue 25: it hung after printing "cost overflow").
 */
function costs(
  scope: readonly AgentNode[],
  records: readonly LedgerRecord[],
  table: ModelCatalogue,
  defaultFresh: number | undefined,
): { base: Baselines; breakdown: CostBreakdown | null; overflow?: string } {
  try {
    const base = computeBaselines(scope, table, defaultFresh);
    let breakdown: CostBreakdown | null = base.actual === null ? null : zeroCost();
    for (const r of records) {
      const info = findModel(r.model, table);
      if (info && breakdown) breakdown = addCost(breakdown, costNano(r.usage, info, r.at, table));
    }
    return { base, breakdown };
  } catch (err) {
    if (!hasCode(err, 'LEDGER_COST_OVERFLOW')) throw err;
    const base: Baselines = {
      actual: null,
      noCache: null,
      freshAgents: null,
      missingFresh: [],
      unpriced: { requests: 0, models: [] },
      freshHead: null,
    };
    return { base, breakdown: null, overflow: `cost not computed: ${(err as Error).message}` };
  }
}

/** Build the summary of the agents in `scope`. */
export function summarize(
  scope: readonly AgentNode[],
  root: string | null,
  lookup: (id: string) => AgentNode | undefined,
  table: ModelCatalogue,
  defaultFresh: number | undefined,
): LedgerSummary {
  const records = scope.flatMap((n) => n.records);
  const usage = sumUsage(records.map((r) => r.usage));
  const split = creationSplit(usage);
  const { base, breakdown, overflow } = costs(scope, records, table, defaultFresh);
  const forks = Object.fromEntries(
    ['total', 'running', ...FORK_END_STATUSES].map((k) => [k, 0]),
  ) as LedgerSummary['forks'];
  const agents = { parent: 0, fork: 0, fresh: 0 };
  for (const node of scope) {
    agents[node.kind ?? 'parent'] += 1;
    if (node.kind !== 'fork') continue;
    forks.total += 1;
    forks[node.status] += 1;
  }
  const fan = computeFanOuts(scope, lookup, table);
  const usd = (nano: number | null): number | null => (nano === null ? null : nanoToUsd(nano));
  return {
    root,
    model_table_date: table.date,
    requests: records.length,
    warmup_requests: records.filter((r) => r.kind === 'warmup').length,
    agents,
    forks,
    usage: {
      input_tokens: usage.input_tokens,
      cache_creation_input_tokens: usage.cache_creation_input_tokens,
      cache_read_input_tokens: usage.cache_read_input_tokens,
      output_tokens: usage.output_tokens,
      cache_creation: { ...split },
    },
    cache: {
      fanouts: fan.totals.fanouts,
      fanout_requests: fan.totals.requests,
      fanout_input_tokens: fan.totals.inputTokens,
      fanout_cache_read_input_tokens: fan.totals.cacheReadTokens,
      fanout_hit_ratio: fan.totals.hitRatio,
      max_fanout_reads: fan.totals.maxReads,
      cache_efficiency: fan.totals.efficiency,
      by_fanout: fan.groups.map((g) => ({
        key: g.key,
        owner_id: g.ownerId ?? null,
        requests: g.requests,
        shared_prefix_tokens: g.sharedPrefixTokens,
        uncached_at_start: g.uncachedAtStart,
        cache_read_input_tokens: g.cacheReadTokens,
        max_fanout_reads: g.maxReads,
        fanout_hit_ratio: g.hitRatio,
        cache_efficiency: g.efficiency,
      })),
    },
    cost_usd: {
      actual: usd(base.actual),
      no_cache: usd(base.noCache),
      fresh_agents: usd(base.freshAgents),
      breakdown: breakdown && breakdownToUsd(breakdown),
    },
    unpriced: base.unpriced,
    warnings: [...modelWarnings(records, table), ...(overflow ? [overflow] : [])],
    savings: {
      vs_no_cache: savings(base.actual, base.noCache),
      vs_fresh_agents: savings(base.actual, base.freshAgents),
    },
    missing_fresh_input: base.missingFresh,
    fresh_head_tokens: base.freshHead,
    cost_error: overflow ?? null,
  };
}
