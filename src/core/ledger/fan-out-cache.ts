import { CACHE_TTL_MS } from '../wire/cache.ts';
import { findModel, type ModelCatalogue } from '../models/catalogue.ts';
import type { LedgerRecord } from './records.ts';
import type { AgentNode } from './tree.ts';
import { totalInputTokens } from './usage.ts';

/**
 * Fan-out metrics, exactly as docs/architecture.md "Ledger definitions" states them:
 * - fan-out requests: the warm-up request (if any) plus each fork child's first request;
 * - `fanout_hit_ratio` = cache reads / total input tokens over the fan-out requests;
 * - `max_fanout_reads` = Σ shared-prefix tokens of the fan-out requests − the shared tokens
 *   not yet cached when the fan-out started (those must be written once);
 * - `cache_efficiency` = fan-out cache reads within each request's shared prefix / `max_fanout_reads` (1.0 = perfect);
 *   reads past the shared prefix (a re-sent first request reading its own earlier write) are not sharing.
 *
 * Choices the definitions leave open (documented here, tested in test/core/ledger):
 * - A fan-out is keyed by the records' `prefixId` when given, else by its owner: a fork
 *   child's parent, or the agent that sent the warm-up. Give `prefixId` on all of a fan-out's
 *   records or on none.
 * - A request's shared-prefix tokens are its `sharedPrefixTokens`, else the fan-out's (the
 *   largest given; a warm-up without the field counts its whole input), capped at the
 *   request's total input: a request cannot read more than it sends.
 * - Tokens cached at the start: `cachedPrefixTokens` from the fan-out's first record that has
 *   it; otherwise derived from the owner's last non-warm-up request that started strictly
 *   before the fan-out: it cached its prefix up to its last marker (read + written tokens),
 *   and the shared prefix extends that prefix. If that request is older than its cache
 *   lifetime (1 h when it wrote 1-hour entries, else 5 min) nothing is cached.
 * - A shared prefix shorter than the model's minimum cacheable length cannot be cached at
 *   all: that fan-out's maximum is 0.
 * - Uncached at the start is never more than the fan-out requests missed in all (Σ shared −
 *   shared reads): what they read was cached for them, whoever wrote it (an earlier pass of a
 *   resumed fan-out, an attempt cancelled or cut by a crash, the app's own request that
 *   pre-warmed the prefix, another client). So `cache_efficiency` ≤ 1 always: 1 when the
 *   counted requests missed nothing they could have read.
 * - `cache_efficiency` is 1 when `max_fanout_reads` is 0 (nothing could be read, nothing was
 *   missed); `fanout_hit_ratio` is 0 when there were no fan-out input tokens.
 */
interface FanOutMetrics {
  key: string;
  ownerId: string | undefined;
  requests: number;
  sharedPrefixTokens: number;
  cachedAtStart: number;
  uncachedAtStart: number;
  inputTokens: number;
  cacheReadTokens: number;
  /**
   * Of the cache reads, those within each request's shared prefix: what the efficiency counts.
   * A fork's first request re-sent after its host died reads its own earlier write of the
   * directive too; that is not sharing, and must not push the efficiency past 1.
   */
  sharedReadTokens: number;
  maxReads: number;
  hitRatio: number;
  efficiency: number;
}

/** Fan-out metrics over several fan-outs together (the summary's `cache` block). */
interface FanOutTotals {
  fanouts: number;
  requests: number;
  inputTokens: number;
  cacheReadTokens: number;
  maxReads: number;
  hitRatio: number;
  efficiency: number;
}

interface Group {
  key: string;
  ownerId: string | undefined;
  records: LedgerRecord[];
}

/** A fork child's first request: lowest turn, then first to arrive; a failed attempt only when there is nothing else. */
function firstRequest(node: AgentNode): LedgerRecord | undefined {
  let first: LedgerRecord | undefined;
  const done = node.records.filter((r) => r.attempt !== 'failed');
  for (const r of done.length > 0 ? done : node.records) {
    if (!first || r.turn < first.turn || (r.turn === first.turn && r.seq < first.seq)) first = r;
  }
  return first;
}

/** Group the fan-out requests of the agents in scope. */
function fanOutGroups(scope: readonly AgentNode[]): Group[] {
  const groups = new Map<string, Group>();
  const put = (ownerId: string | undefined, record: LedgerRecord): void => {
    const key = record.prefixId ?? `owner:${ownerId ?? ''}`;
    const group = groups.get(key) ?? { key, ownerId, records: [] };
    group.records.push(record);
    groups.set(key, group);
  };
  for (const node of scope) {
    for (const r of node.records) if (r.kind === 'warmup') put(node.id, r);
    if (node.kind === 'fork') {
      const first = firstRequest(node);
      if (first) put(node.parentId, first);
    }
  }
  return [...groups.values()];
}

function ratio(num: number, den: number, whenZero: number): number {
  return den === 0 ? whenZero : num / den;
}

function cachedAtStart(group: Group, shared: number, owner: AgentNode | undefined): number {
  const bySeq = [...group.records].sort((a, b) => a.seq - b.seq);
  const explicit = bySeq.find((r) => r.cachedPrefixTokens !== undefined)?.cachedPrefixTokens;
  if (explicit !== undefined) return Math.min(explicit, shared);
  const start = Math.min(...group.records.map((r) => r.at));
  let last: LedgerRecord | undefined;
  for (const r of owner?.records ?? []) {
    if (r.kind === 'warmup' || r.at >= start) continue;
    if (!last || r.at > last.at || (r.at === last.at && r.seq > last.seq)) last = r;
  }
  if (!last) return 0;
  const ttl = (last.usage.cache_creation?.ephemeral_1h_input_tokens ?? 0) > 0 ? CACHE_TTL_MS['1h'] : CACHE_TTL_MS['5m'];
  if (start - last.at > ttl) return 0;
  return Math.min(shared, last.usage.cache_read_input_tokens + last.usage.cache_creation_input_tokens);
}

function metricsOf(group: Group, owner: AgentNode | undefined, table: ModelCatalogue): FanOutMetrics {
  const declared = (r: LedgerRecord): number | undefined =>
    r.sharedPrefixTokens ?? (r.kind === 'warmup' ? totalInputTokens(r.usage) : undefined);
  const given = group.records.map(declared).filter((n): n is number => n !== undefined);
  const shared = given.length > 0 ? Math.max(...given) : 0;
  let inputTokens = 0;
  let cacheReadTokens = 0;
  let sharedReadTokens = 0;
  let sharedSum = 0;
  for (const r of group.records) {
    const total = totalInputTokens(r.usage);
    const sharedHere = Math.min(declared(r) ?? shared, total);
    inputTokens += total;
    cacheReadTokens += r.usage.cache_read_input_tokens;
    sharedReadTokens += Math.min(r.usage.cache_read_input_tokens, sharedHere);
    sharedSum += sharedHere;
  }
  // What the counted requests read was cached for them, whoever wrote it: an earlier pass, an
  // attempt cancelled or cut by a crash (billed, not counted here), the app's own request. So
  // the part that had to be written is at most what they missed in all; without this bound a
  // resumed or pre-warmed fan-out, all of whose requests read, came out above 1.
  const missed = sharedSum - sharedReadTokens;
  const uncached = Math.min(shared - cachedAtStart(group, shared, owner), missed);
  const cached = shared - uncached;
  const model = group.records[0] ? findModel(group.records[0].model, table) : undefined;
  const cacheable = shared >= (model?.minCacheableTokens ?? 0);
  const maxReads = cacheable ? Math.max(0, sharedSum - uncached) : 0;
  return {
    key: group.key,
    ownerId: group.ownerId,
    requests: group.records.length,
    sharedPrefixTokens: shared,
    cachedAtStart: cached,
    uncachedAtStart: uncached,
    inputTokens,
    cacheReadTokens,
    sharedReadTokens,
    maxReads,
    hitRatio: ratio(cacheReadTokens, inputTokens, 0),
    efficiency: ratio(sharedReadTokens, maxReads, 1),
  };
}

/**
 * Compute the metrics of every fan-out in `scope` and over all of them. `lookup` finds an
 * owner outside the scope (its last request tells what was cached at the start).
 */
export function computeFanOuts(
  scope: readonly AgentNode[],
  lookup: (id: string) => AgentNode | undefined,
  table: ModelCatalogue,
): { groups: FanOutMetrics[]; totals: FanOutTotals } {
  const groups = fanOutGroups(scope).map((g) =>
    metricsOf(g, g.ownerId === undefined ? undefined : lookup(g.ownerId), table),
  );
  const sum = (pick: (m: FanOutMetrics) => number): number => groups.reduce((acc, m) => acc + pick(m), 0);
  const inputTokens = sum((m) => m.inputTokens);
  const cacheReadTokens = sum((m) => m.cacheReadTokens);
  const sharedReadTokens = sum((m) => m.sharedReadTokens);
  const maxReads = sum((m) => m.maxReads);
  return {
    groups,
    totals: {
      fanouts: groups.length,
      requests: sum((m) => m.requests),
      inputTokens,
      cacheReadTokens,
      maxReads,
      hitRatio: ratio(cacheReadTokens, inputTokens, 0),
      efficiency: ratio(sharedReadTokens, maxReads, 1),
    },
  };
}
