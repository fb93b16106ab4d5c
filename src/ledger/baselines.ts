import { ForkcacheError } from '../errors.ts';
import { costNano, noCacheNano, ratesFor } from './cost.ts';
import { firstRequest } from './fanout.ts';
import { findModel, type ModelInfo, type ModelTable } from './models.ts';
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
 */
export interface Baselines {
  actual: number;
  noCache: number;
  freshAgents: number | null;
  /** Fork children without a fresh-agent input count (why `freshAgents` is null). */
  missingFresh: string[];
}

function modelOf(id: string, table: ModelTable): ModelInfo {
  const info = findModel(id, table);
  // Records are validated against the same table on entry; reaching this is a bug.
  if (!info) throw new ForkcacheError('INTERNAL', `model "${id}" vanished from the model table`);
  return info;
}

/** Compute the baselines over the agents in `scope`. */
export function computeBaselines(scope: readonly AgentNode[], table: ModelTable, defaultFresh: number | undefined): Baselines {
  let actual = 0;
  let noCache = 0;
  let fanoutActual = 0;
  let freshCost = 0;
  const missingFresh: string[] = [];
  for (const node of scope) {
    for (const r of node.records) {
      const info = modelOf(r.model, table);
      const cost = costNano(r.usage, info).total;
      actual += cost;
      noCache += noCacheNano(r.usage, info);
      if (r.kind === 'warmup') fanoutActual += cost;
    }
    if (node.kind !== 'fork') continue;
    const first = firstRequest(node);
    if (!first) continue;
    const info = modelOf(first.model, table);
    fanoutActual += costNano(first.usage, info).total;
    const fresh = first.freshInputTokens ?? node.records.find((r) => r.freshInputTokens !== undefined)?.freshInputTokens ?? defaultFresh;
    if (fresh === undefined) {
      missingFresh.push(node.id);
      continue;
    }
    const rates = ratesFor(info);
    freshCost += fresh * rates.input + first.usage.output_tokens * rates.output;
  }
  const freshAgents = missingFresh.length > 0 ? null : actual - fanoutActual + freshCost;
  return { actual, noCache, freshAgents, missingFresh };
}
