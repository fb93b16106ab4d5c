import { costNano, noCacheNano } from './cost.ts';
import { firstRequest } from './fanout.ts';
import { findModel, type ModelEntry, type ModelCatalogue } from '../models/catalogue.ts';
import type { AgentNode } from './tree.ts';

/**
 * The tree's actual cost and two baselines, from the same token counts, in nano-dollars.
 *
 * - `actual` = Σ over every request of its billed cost (`costNano`).
 * - `noCache` = Σ over every request of (input + cache writes + cache reads) × base input
 *   price + output × output price: the same requests with no prompt caching at all.
 * - `freshAgents` replaces every fork child by a fresh agent (fallback system prompt + tools
 *   + directive, no history, no sharing):
 *     freshAgents = actual
 *                 − Σ actual cost of the fan-out requests (warm-ups and each fork child's
 *                   first request)
 *                 + Σ over fork children c of (F_c × base input price + O_c × output price)
 *   where F_c is the child's `freshInputTokens` (or the ledger default) and O_c the output
 *   tokens of its first request (the same answer is assumed). Everything else — the parent's
 *   turns, fresh agents' turns and the fork children's later turns — keeps its actual cost:
 *   how a fresh agent's own later turns would cache is out of scope. Because a fork's later
 *   turns carry (and read from cache) the larger shared prefix, this slightly overstates the
 *   fresh-agent cost of multi-turn children. `null` when some fork child has no F_c.
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
}

/** Compute the baselines over the agents in `scope`. */
export function computeBaselines(
  scope: readonly AgentNode[],
  table: ModelCatalogue,
  defaultFresh: number | undefined,
): Baselines {
  let actual = 0;
  let noCache = 0;
  let fanoutActual = 0;
  let freshCost = 0;
  const missingFresh: string[] = [];
  const unpriced = { requests: 0, models: new Set<string>() };
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
      if (r.kind === 'warmup') fanoutActual += cost;
    }
    if (node.kind !== 'fork') continue;
    const first = firstRequest(node);
    if (!first) continue;
    const info = findModel(first.model, table);
    if (!info || info.prices.length === 0) continue;
    fanoutActual += costNano(first.usage, info, first.at, table).total;
    const fresh =
      first.freshInputTokens ??
      node.records.find((r) => r.freshInputTokens !== undefined)?.freshInputTokens ??
      defaultFresh;
    if (fresh === undefined) {
      missingFresh.push(node.id);
      continue;
    }
    // A fresh agent's request: F uncached input tokens and the same output, priced as one.
    const freshUsage = {
      input_tokens: fresh,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      output_tokens: first.usage.output_tokens,
    };
    freshCost += costNano(freshUsage, info, first.at, table).total;
  }
  const models = [...unpriced.models].sort();
  if (unpriced.requests > 0)
    return {
      actual: null,
      noCache: null,
      freshAgents: null,
      missingFresh,
      unpriced: { requests: unpriced.requests, models },
    };
  const freshAgents = missingFresh.length > 0 ? null : actual - fanoutActual + freshCost;
  return { actual, noCache, freshAgents, missingFresh, unpriced: { requests: 0, models } };
}
