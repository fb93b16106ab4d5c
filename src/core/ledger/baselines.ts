import { costNano, noCacheNano } from './cost.ts';
import { freshAgentUsages, type ForkTurns } from './fresh-agents.ts';
import { findModel, type ModelEntry, type ModelCatalogue } from '../models/catalogue.ts';
import type { LedgerRecord } from './records.ts';
import type { AgentNode } from './tree.ts';
import { totalInputTokens } from './usage.ts';

/**
 * The tree's actual cost and two baselines, from the same token counts, in nano-dollars.
 *
 * - `actual` = Σ over every request of its billed cost (`costNano`).
 * - `noCache` = Σ over every request of (input + cache writes + cache reads) × base input
 *   price + output × output price: the same requests with no prompt caching at all.
 * - `freshAgents`: every fork child replaced by a fresh agent, as src/core/ledger/fresh-agents.ts
 *   defines it (the one definition economics, the estimator and the bench use too):
 *     freshAgents = actual − Σ actual of the forks' successful requests and of the warm-ups
 *                 + Σ the fresh agents' requests for the same turns.
 *   `null` when some fork child has no fresh-agent size (F + D: `freshInputTokens`).
 *
 * Every request is priced by the row in force on its date (`at`) and its band. A request on a
 * model the catalogue cannot price makes all three null: a partial sum would understate them.
 */
export interface Baselines {
  /** Null when some request's model cannot be priced (see `unpriced`). */
  actual: number | null;
  noCache: number | null;
  freshAgents: number | null;
  /** Fork children without a fresh-agent input count (why `freshAgents` is null). */
  missingFresh: string[];
  /** Requests whose model the catalogue cannot price, and those models. */
  unpriced: { requests: number; models: string[] };
  /** F: what every fresh agent is given before its directive (the largest over the fan-outs); null without forks. */
  freshHead: number | null;
}

/** A fork child's successful requests, one per turn, in turn order. */
function turnsOf(node: AgentNode): LedgerRecord[] {
  const byTurn = new Map<number, LedgerRecord>();
  for (const r of node.records) if (r.attempt !== 'failed' && !byTurn.has(r.turn)) byTurn.set(r.turn, r);
  return [...byTurn.values()].sort((a, b) => a.turn - b.turn);
}

/** F, the fresh agents' shared head: given, or the fresh first request less the fork's directive. */
function freshHeadOf(first: LedgerRecord, freshFirst: number): number {
  if (first.freshHeadTokens !== undefined) return first.freshHeadTokens;
  if (first.sharedPrefixTokens === undefined) return 0; // not known: no agent reads another's head
  return Math.max(0, freshFirst - Math.max(0, totalInputTokens(first.usage) - first.sharedPrefixTokens));
}

interface FreshFork {
  turns: LedgerRecord[];
  shape: ForkTurns;
  info: ModelEntry;
}

/** The fan-out's F: the largest any of its forks' records gives or implies. */
function headOf(forks: readonly FreshFork[]): number {
  return Math.max(0, ...forks.map((f) => freshHeadOf(f.turns[0]!, f.shape.freshFirst)));
}

/** The fresh agents' cost of one fan-out's forks (they share F; the first one sent writes it). */
function freshCost(forks: FreshFork[], table: ModelCatalogue): number {
  forks.sort((a, b) => a.turns[0]!.at - b.turns[0]!.at || a.turns[0]!.seq - b.turns[0]!.seq);
  const head = headOf(forks);
  const usages = freshAgentUsages(
    forks.map((f) => f.shape),
    head,
    forks[0]?.info.minCacheableTokens ?? 0,
  );
  let total = 0;
  forks.forEach((f, i) =>
    usages[i]!.forEach((usage, k) => (total += costNano(usage, f.info, f.turns[k]!.at, table).total)),
  );
  return total;
}

/** Compute the baselines over the agents in `scope`. */
export function computeBaselines(
  scope: readonly AgentNode[],
  table: ModelCatalogue,
  defaultFresh: number | undefined,
): Baselines {
  let actual = 0;
  let noCache = 0;
  let replaced = 0;
  const missingFresh: string[] = [];
  const unpriced = { requests: 0, models: new Set<string>() };
  const fanouts = new Map<string, FreshFork[]>();
  const priced = (model: string): ModelEntry | undefined => {
    const info = findModel(model, table);
    if (info && info.prices.length > 0) return info;
    unpriced.requests += 1;
    unpriced.models.add(model);
    return undefined;
  };
  for (const node of scope) {
    for (const r of node.records) {
      const info = priced(r.model);
      if (!info) continue;
      const cost = costNano(r.usage, info, r.at, table).total;
      actual += cost;
      noCache += noCacheNano(r.usage, info, r.at, table);
      if (r.kind === 'warmup') replaced += cost;
    }
    if (node.kind !== 'fork') continue;
    const turns = turnsOf(node);
    const first = turns[0];
    const info = first && findModel(first.model, table);
    if (!first || !info || info.prices.length === 0) continue;
    const freshFirst =
      first.freshInputTokens ??
      node.records.find((r) => r.freshInputTokens !== undefined)?.freshInputTokens ??
      defaultFresh;
    if (freshFirst === undefined) {
      missingFresh.push(node.id);
      continue;
    }
    for (const r of turns) replaced += costNano(r.usage, info, r.at, table).total;
    const shape = {
      inputs: turns.map((r) => totalInputTokens(r.usage)),
      outputs: turns.map((r) => r.usage.output_tokens),
      freshFirst,
    };
    const key = first.prefixId ?? node.parentId ?? '';
    fanouts.set(key, [...(fanouts.get(key) ?? []), { turns, shape, info }]);
  }
  const models = [...unpriced.models].sort();
  const heads = [...fanouts.values()].map(headOf);
  const freshHead = heads.length === 0 ? null : Math.max(...heads);
  if (unpriced.requests > 0)
    return {
      actual: null,
      noCache: null,
      freshAgents: null,
      missingFresh,
      unpriced: { requests: unpriced.requests, models },
      freshHead,
    };
  let fresh = 0;
  for (const forks of fanouts.values()) fresh += freshCost(forks, table);
  const freshAgents = missingFresh.length > 0 ? null : actual - replaced + fresh;
  return { actual, noCache, freshAgents, missingFresh, unpriced: { requests: 0, models }, freshHead };
}
