import { ForkcacheError } from '../../util/errors.ts';
import type { SpendPricing } from '../../gate/admission/admission-gate.ts';
import type { SpendCapView } from '../../gate/admission/spend-cap.ts';
import { inputTokensBound } from '../../gate/admission/admission-gate.ts';
import { costNano } from '../../ledger/cost.ts';
import { requestBoundNano } from '../../ledger/spend-bound.ts';
import { normalizeUsage, type UsageInput } from '../../ledger/usage.ts';
import { findModel, type ModelCatalogue } from '../../models/catalogue.ts';
import { PRICING_HINT } from '../../models/status.ts';
import type { RequestRecord } from '../../loop/types.ts';
import type { FrozenPrefix } from '../../prefix/freeze.ts';
import type { FanOutDeps } from './types.ts';

/** A spend cap in dollars needs prices: a model the catalogue cannot price cannot be capped. */
export function unpricedForCap(model: string, table: ModelCatalogue): ForkcacheError {
  return new ForkcacheError(
    'INVALID_OPTION',
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

/** What earlier passes of a resumed run spent: the cap counts the whole run. */
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

/** What the cap needs of a fork's results. */
interface CappedResult {
  status: string;
  error?: { code: string } | undefined;
  requests: readonly RequestRecord[];
  failedAttempts?: readonly RequestRecord[] | undefined;
}

/**
 * The margin on the projection: later forks can be larger than the first ones, and a fork's
 * turns after its restart are held at estimates above what they cost.
 */
const NEXT_CAP_MARGIN = 2;

/**
 * The cap that should let the run finish, generous rather than short (a cap is a limit, not a
 * price): the run's spend so far projected over all its forks from the ones done, or what was
 * spent plus every fork still to do at the done ones' average, whichever is more, with a
 * margin (with no fork done yet, twice the cap or the spend: nothing better is known); plus
 * `restartNano`, what the next session holds for each fork it goes on with: the first request
 * of each is held at its worst case (the prefix and the fork's own history written again, on
 * a cache that may have expired), and a cap below that stops the next session again. In whole
 * cents up.
 */
function nextMaxUsd(
  spend: Pick<SpendPricing, 'price'>,
  view: SpendCapView,
  results: readonly CappedResult[],
  restartNano = 0,
): number {
  const done = results.filter(isDone);
  const left = results.filter(goesOn);
  const cost = (r: CappedResult): number =>
    spentBefore(spend as SpendPricing, [...r.requests, ...(r.failedAttempts ?? [])]);
  const cents = (usd: number): number => Math.ceil(usd * 100 - 1e-9) / 100;
  const restart = restartNano / 1e9;
  if (done.length === 0) return cents(Math.max(view.maxUsd * 2, view.spentUsd * 2) + restart);
  const average = done.reduce((sum, r) => sum + cost(r), 0) / done.length / 1e9;
  const projected = (view.spentUsd * results.length) / done.length;
  const rest = view.spentUsd + left.length * average;
  return cents(NEXT_CAP_MARGIN * Math.max(view.maxUsd, projected, rest) + restart);
}

function isDone(r: CappedResult): boolean {
  return r.status === 'completed' || r.status === 'no_change';
}

/** A fork `resume` goes on with (the others ended for good unless retried). */
function goesOn(r: CappedResult): boolean {
  return r.status === 'capped' || r.status === 'failed' || r.status === 'cancelled';
}

/**
 * The summary's `spend_cap`: the cap, what was spent by its count, whether it stopped forks,
 * the cap to go on with (`restartNano(forkId)`: what the next session holds for that fork's
 * first request).
 */
export function spendCapSummary(
  spend: Pick<SpendPricing, 'price'>,
  view: SpendCapView,
  results: readonly (CappedResult & { forkId?: string })[],
  restartNano: (forkId: string) => number | undefined = () => undefined,
): { max_usd: number; spent_usd: number; stopped: boolean; stopped_forks: number; next_max_usd: number | null } {
  const stopped = results.filter((r) => r.error?.code === 'SPEND_CAP_MAX_USD').length;
  const isStopped = stopped > 0 || view.stopped;
  return {
    max_usd: view.maxUsd,
    spent_usd: view.spentUsd,
    stopped: isStopped,
    stopped_forks: stopped,
    next_max_usd: isStopped
      ? nextMaxUsd(
          spend,
          view,
          results,
          results.filter(goesOn).reduce((sum, r) => sum + (restartNano(r.forkId ?? '') ?? 0), 0),
        )
      : null,
  };
}
