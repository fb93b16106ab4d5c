import { ForkcacheError } from '../errors.ts';
import type { SpendPricing } from '../gate/admission/fan-out-gate.ts';
import type { SpendCapView } from '../gate/admission/spend-cap.ts';
import { inputTokensBound } from '../gate/admission/fan-out-gate.ts';
import { costNano } from '../ledger/cost.ts';
import { requestBoundNano } from '../ledger/spend-bound.ts';
import { normalizeUsage, type UsageInput } from '../ledger/usage.ts';
import { findModel, type ModelCatalogue } from '../models/catalogue.ts';
import { PRICING_HINT } from '../models/status.ts';
import type { RequestRecord } from '../loop/types.ts';
import type { FrozenPrefix } from '../prefix/freeze.ts';
import type { FanOutDeps } from './fan-out-types.ts';

/** A spend cap in dollars needs prices: a model the catalogue cannot price cannot be capped. */
export function unpricedForCap(model: string, table: ModelCatalogue): ForkcacheError {
  return new ForkcacheError(
    'INVALID_ARGUMENT',
    `maxUsd: "${model}" cannot be priced (it is not in the model catalogue of ${table.date}, or has no prices), so no spend cap can hold it; ${PRICING_HINT}`,
    { data: { field: 'maxUsd' } },
  );
}

/**
 * The spend cap as one fan-out uses it (`maxUsd`): its model priced from the ledger's
 * catalogue, at the engine's clock. A model the catalogue cannot price cannot be capped in
 * dollars: refused before anything is sent.
 */
export function fanOutSpend(deps: FanOutDeps, prefix: FrozenPrefix): SpendPricing | undefined {
  const cap = deps.spendCap;
  if (!cap) return undefined;
  const table = deps.ledger.table;
  const info = findModel(prefix.snapshot.model, table);
  if (!info || info.prices.length === 0) throw unpricedForCap(prefix.snapshot.model, table);
  // a 1-hour write is dearer than a 5-minute one: only a head that asks for one can be billed it
  const longTtl = prefix.ttl === '1h' || new TextDecoder().decode(prefix.head).includes('"ttl":"1h"');
  return {
    cap,
    bound: (inputTokens, maxTokens) => requestBoundNano(info, table, deps.clock.now(), inputTokens, maxTokens, longTtl),
    price: (usage) => costNano(normalizeUsage(usage), info, deps.clock.now(), table).total,
  };
}

/** What earlier sessions of a resumed run spent: the cap counts the whole run. */
export function spentBefore(spend: SpendPricing, requests: readonly RequestRecord[]): number {
  return requests.reduce((sum, r) => sum + spend.price(r.usage), 0);
}

/**
 * A request sent outside the forks' gate (a pre-warm, a Chat warm-up) under the cap: reserved at
 * its bound, settled at its price. `send` gets the callback to call once its response began.
 */
export async function underSpendCap<T extends { usage: UsageInput }>(
  spend: SpendPricing | undefined,
  request: {
    bytes: number;
    headBytes: number;
    sharedTokens: number | undefined;
    maxTokens: number;
    signal?: AbortSignal;
  },
  send: (began: () => void) => Promise<T>,
): Promise<T> {
  if (!spend) return send(() => undefined);
  const cost = {
    bytes: request.bytes,
    freshBytes: Math.max(0, request.bytes - request.headBytes),
    maxTokens: request.maxTokens,
  };
  const hold = await spend.cap.reserve(
    spend.bound(inputTokensBound(cost, request.sharedTokens), request.maxTokens),
    request.signal,
  );
  try {
    const result = await send(() => hold.started());
    hold.settle(spend.price(normalizeUsage(result.usage)));
    return result;
  } catch (err) {
    hold.settle(undefined);
    throw err;
  }
}

/** The summary's `spend_cap`: the cap, what was spent by its count, whether it stopped forks. */
export function spendCapSummary(
  view: SpendCapView,
  results: readonly { error?: { code: string } | undefined }[],
): { max_usd: number; spent_usd: number; stopped: boolean; stopped_forks: number } {
  const stopped = results.filter((r) => r.error?.code === 'SPEND_CAP_MAX_USD').length;
  return {
    max_usd: view.maxUsd,
    spent_usd: view.spentUsd,
    stopped: stopped > 0 || view.stopped,
    stopped_forks: stopped,
  };
}
