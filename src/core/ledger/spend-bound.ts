import type { ModelCatalogue, ModelEntry } from '../models/catalogue.ts';
import { priceTerms } from '../models/pricing.ts';

/**
 * The most one request can cost, in nano-dollars: what `--max-usd` reserves for a request while
 * it is in flight, so that the ledger plus everything in flight never passes the cap.
 *
 * - every input token at the dearest rate an input token of it can be billed at: the input
 *   price or the cache write price (a miss writes all of it) of the longest TTL its markers
 *   name (`longTtl`: a 1-hour marker in the frozen head), in the band its prompt length falls in;
 * - `maxTokens` output tokens at the output price (a turn can never produce more);
 * - the largest inference-geography modifier when the model is billed by geography (a
 *   workspace's default region can bill a request that names none). Fast mode is not in the
 *   bound: a fork's requests never carry `speed` (the frozen head has no such field).
 *
 * `inputTokens` is the caller's bound on the request's input (see the admission's estimate).
 */
export function requestBoundNano(
  info: ModelEntry,
  table: ModelCatalogue,
  at: number,
  inputTokens: number,
  maxTokens: number,
  longTtl = true,
): number {
  const geos = Object.entries(table.modifiers.inferenceGeoMultipliers).sort((a, b) => b[1] - a[1]);
  const geo = info.inferenceGeo && (geos[0]?.[1] ?? 1) > 1 ? geos[0]?.[0] : undefined;
  const ctx = { input: inputTokens, cacheWrite: 0, cacheRead: 0, inferenceGeo: geo };
  const rates = priceTerms(info, table, at, ctx)?.rates;
  if (!rates) return 0;
  const input = Math.max(rates.input, rates.cacheWrite5m, longTtl ? rates.cacheWrite1h : 0);
  return Math.ceil(inputTokens * input + maxTokens * rates.output);
}
