import type { ModelCatalogue, ModelEntry, PriceRow, PriceTier, TierRates } from './catalogue.ts';
import { ForkcacheError } from '../util/errors.ts';
import { isoDay } from './status.ts';

/** What a request's usage says about how it was billed (the API reports these in `usage`). */
export interface BillingContext {
  /** Prompt length by class, to pick a band: uncached input, cache writes, cache reads. */
  input: number;
  cacheWrite: number;
  cacheRead: number;
  /** `usage.service_tier`: `batch` is billed at the batch multiplier. */
  serviceTier?: string | undefined;
  /** `usage.inference_geo`: e.g. `us`, billed at the catalogue's multiplier on 4.6+ models. */
  inferenceGeo?: string | undefined;
  /** `usage.speed`: `fast` uses the tier's fast-mode rates. */
  speed?: string | undefined;
}

/** Per-token rates in nano-dollars (1e-9 USD); fractional where modifiers make them so. */
export interface Rates {
  input: number;
  cacheWrite5m: number;
  cacheWrite1h: number;
  cacheRead: number;
  output: number;
}

/** The priced terms of one request: the row and tier used, and the rates after modifiers. */
export interface PriceTerms {
  effectiveFrom: string;
  /** The band's name for a banded model, else null. */
  band: string | null;
  rates: Rates;
}

/**
 * The price row in force at `at` (epoch ms): the last row whose `effectiveFrom` is not after
 * that day. A date before the first row takes the first row (the earliest prices known).
 * Undefined for a model with no prices (retired).
 */
export function priceRowAt(entry: ModelEntry, at: number): PriceRow | undefined {
  const day = isoDay(at);
  let row = entry.prices[0];
  for (const candidate of entry.prices) if (candidate.effectiveFrom <= day) row = candidate;
  return row;
}

/** The first day a model has a price (its first row's `effectiveFrom`), or null when it has none. */
function firstPricedDay(entry: ModelEntry): string | null {
  return entry.prices[0]?.effectiveFrom ?? null;
}

/** Whether the model had a price row in force on the day of `at`: it existed then, for the catalogue. */
export function pricedOn(entry: ModelEntry, at: number): boolean {
  const first = firstPricedDay(entry);
  return first !== null && first <= isoDay(at);
}

/**
 * Refuse a date the catalogue has no prices for (a `--date` before the model's first price
 * row): pricing it with a later row would pass off prices that did not exist yet.
 */
export function assertPricedOn(entry: ModelEntry, at: number, field: string): void {
  const first = firstPricedDay(entry);
  if (first === null || first <= isoDay(at)) return;
  throw new ForkcacheError(
    'INVALID_OPTION',
    `${field}: ${isoDay(at)} is before the first price of ${entry.id} in the catalogue (${first}); use a date from ${first} on`,
    { data: { field, model: entry.id, firstPriced: first } },
  );
}

/** The tier a request of this prompt length pays: every token class of it, output included. */
function tierFor(row: PriceRow, ctx: BillingContext): PriceTier {
  const prompt = row.bandCounts.reduce((sum, cls) => sum + ctx[cls], 0);
  const tier =
    row.tiers.find((t) => t.upToPromptTokens === null || prompt <= t.upToPromptTokens) ??
    row.tiers[row.tiers.length - 1];
  if (!tier) throw new ForkcacheError('MODEL_CATALOGUE_INVALID', 'a price row has no tiers');
  return tier;
}

// 1e-6 nano-dollar resolution for the rates: 200 × 1.1 must be 220, not 220.00000000000003.
const round = (n: number): number => Math.round(n * 1e6) / 1e6;

/** A price per million tokens in nano-dollars per token. */
function nano(perMTok: number, factor: number): number {
  return round(perMTok * 1000 * factor);
}

/**
 * Price one request: its date picks the row, its prompt length the band, and its usage the
 * modifiers (batch, inference geography, fast mode), which stack with caching.
 */
export function priceTerms(
  entry: ModelEntry,
  catalogue: ModelCatalogue,
  at: number,
  ctx: BillingContext,
): PriceTerms | undefined {
  const row = priceRowAt(entry, at);
  if (!row) return undefined;
  const tier = tierFor(row, ctx);
  const base: TierRates = ctx.speed === 'fast' && tier.fast ? tier.fast : tier;
  let factor = ctx.serviceTier === 'batch' ? catalogue.modifiers.batchMultiplier : 1;
  const geo =
    ctx.inferenceGeo === undefined ? undefined : catalogue.modifiers.inferenceGeoMultipliers[ctx.inferenceGeo];
  if (entry.inferenceGeo && geo !== undefined) factor *= geo;
  return {
    effectiveFrom: row.effectiveFrom,
    band: tier.name,
    rates: {
      input: nano(base.inputPerMTok, factor),
      cacheWrite5m: nano(base.cacheWrite5mPerMTok, factor),
      cacheWrite1h: nano(base.cacheWrite1hPerMTok, factor),
      cacheRead: nano(base.cacheReadPerMTok, factor),
      output: nano(base.outputPerMTok, factor),
    },
  };
}

/** The read price as a multiple of the input price, of the row and tier in force. */
export function readMultiplier(tier: TierRates): number {
  return tier.inputPerMTok === 0 ? 0 : round(tier.cacheReadPerMTok / tier.inputPerMTok);
}
