import { ForkcacheError, hasCode } from '../util/errors.ts';
import { BUILTIN_CATALOGUE, findModel, type ModelCatalogue, type ModelEntry } from '../models/catalogue.ts';
import { priceTerms, type BillingContext, type PriceTerms, type Rates } from '../models/pricing.ts';
import { creationSplit, normalizeUsage, totalInputTokens, type Usage, type UsageInput } from './usage.ts';

/**
 * Money is computed in integer nano-dollars (1e-9 USD) and converted to USD once, at the end,
 * so sums never pick up float noise (3 × 0.1 is not 0.3 in binary floating point).
 * A price of $X per million tokens is 1000·X nano-dollars per token. Modifiers can make a
 * rate fractional (batch × inference geography: 10 × 0.5 × 1.1 = 5.5), so each component of
 * one request is rounded to a whole nano-dollar once; every sum after that is exact.
 */

/** A cost split by what was billed. In USD from `costUsd`, in nano-dollars from `costNano`. */
export interface CostBreakdown {
  input: number;
  cacheWrite5m: number;
  cacheWrite1h: number;
  cacheRead: number;
  output: number;
  total: number;
}

const NANO_PER_USD = 1e9;

/** How a usage was billed: its prompt length by class and the modifiers it reports. */
function billingContext(usage: Usage): BillingContext {
  return {
    input: usage.input_tokens,
    cacheWrite: usage.cache_creation_input_tokens,
    cacheRead: usage.cache_read_input_tokens,
    serviceTier: usage.service_tier,
    inferenceGeo: usage.inference_geo,
    speed: usage.speed,
  };
}

/**
 * The terms one request was billed on: the price row in force at `at` (epoch ms), the band its
 * prompt length falls in, the modifiers its usage reports. Throws for a model without prices.
 */
export function termsFor(
  usage: Usage,
  info: ModelEntry,
  at: number,
  catalogue: ModelCatalogue = BUILTIN_CATALOGUE,
): PriceTerms {
  const terms = priceTerms(info, catalogue, at, billingContext(usage));
  if (!terms)
    throw new ForkcacheError('MODEL_RETIRED', `model "${info.id}" has no prices (status ${info.status})`, {
      data: { model: info.id },
    });
  return terms;
}

/** Per-token rates in nano-dollars of a request of this usage at `at`. */
function ratesFor(
  info: ModelEntry,
  at: number,
  usage: Usage = { input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 0 },
  catalogue: ModelCatalogue = BUILTIN_CATALOGUE,
): Rates {
  return termsFor(usage, info, at, catalogue).rates;
}

function exact(value: number): number {
  value = Math.round(value);
  // Past 2^53 integers stop being exact; at these rates that is millions of dollars.
  if (!Number.isSafeInteger(value))
    throw new ForkcacheError(
      'LEDGER_COST_OVERFLOW',
      `cost overflow: ${value} nano-dollars is not a safe integer (a price or a token count out of range)`,
    );
  return value;
}

/**
 * Cost of one usage in integer nano-dollars, by component (each rounded to a nano-dollar once,
 * so sums stay exact). `at` picks the price row in force on the request's date.
 */
export function costNano(
  usage: Usage,
  info: ModelEntry,
  at: number,
  catalogue: ModelCatalogue = BUILTIN_CATALOGUE,
): CostBreakdown {
  const rates = ratesFor(info, at, usage, catalogue);
  const split = creationSplit(usage);
  const parts = {
    input: exact(usage.input_tokens * rates.input),
    // OpenAI's 30-minute and 12-hour writes at the row's short and long write rates (see CacheCreationSplit)
    cacheWrite5m: exact((split.ephemeral_5m_input_tokens + (split.ttl_30m_input_tokens ?? 0)) * rates.cacheWrite5m),
    cacheWrite1h: exact((split.ephemeral_1h_input_tokens + (split.ttl_12h_input_tokens ?? 0)) * rates.cacheWrite1h),
    cacheRead: exact(usage.cache_read_input_tokens * rates.cacheRead),
    output: exact(usage.output_tokens * rates.output),
  };
  return {
    ...parts,
    total: exact(parts.input + parts.cacheWrite5m + parts.cacheWrite1h + parts.cacheRead + parts.output),
  };
}

/** A breakdown of all zeros. */
export function zeroCost(): CostBreakdown {
  return { input: 0, cacheWrite5m: 0, cacheWrite1h: 0, cacheRead: 0, output: 0, total: 0 };
}

/** Add two breakdowns in the same unit (use on nano-dollars to stay exact). */
export function addCost(a: CostBreakdown, b: CostBreakdown): CostBreakdown {
  return {
    input: exact(a.input + b.input),
    cacheWrite5m: exact(a.cacheWrite5m + b.cacheWrite5m),
    cacheWrite1h: exact(a.cacheWrite1h + b.cacheWrite1h),
    cacheRead: exact(a.cacheRead + b.cacheRead),
    output: exact(a.output + b.output),
    total: exact(a.total + b.total),
  };
}

/** Nano-dollars to USD (one correctly rounded division: 300_000_000 → 0.3). */
export function nanoToUsd(nano: number): number {
  return nano / NANO_PER_USD;
}

/** Convert a nano-dollar breakdown to USD. */
export function breakdownToUsd(nano: CostBreakdown): CostBreakdown {
  return {
    input: nanoToUsd(nano.input),
    cacheWrite5m: nanoToUsd(nano.cacheWrite5m),
    cacheWrite1h: nanoToUsd(nano.cacheWrite1h),
    cacheRead: nanoToUsd(nano.cacheRead),
    output: nanoToUsd(nano.output),
    total: nanoToUsd(nano.total),
  };
}

/**
 * Cost of one request in USD, or `null` for a model the catalogue cannot price (an id it does
 * not know: it still runs, the API is the judge; or a price so far out of range that the cost
 * is not a safe integer of nano-dollars). Writes use the `cache_creation` TTL split
 * when present, otherwise all writes are billed as 5-minute writes. `at` (epoch ms, default
 * now) picks the price row in force; `total` is computed in nano-dollars before conversion.
 *
 * @example costUsd({ input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 1_000_000, output_tokens: 0 }, 'claude-opus-5-5')?.total // 0.2
 */
export function costUsd(
  usage: Usage | UsageInput,
  model: string | ModelEntry,
  options: { at?: number; catalogue?: ModelCatalogue } = {},
): CostBreakdown | null {
  const catalogue = options.catalogue ?? BUILTIN_CATALOGUE;
  const info = typeof model === 'string' ? findModel(model, catalogue) : model;
  if (!info || info.prices.length === 0) return null;
  try {
    return breakdownToUsd(costNano(normalizeUsage(usage), info, options.at ?? Date.now(), catalogue));
  } catch (err) {
    // a price out of range cannot be priced either; the ledger's summary says why (`cost_error`)
    if (hasCode(err, 'LEDGER_COST_OVERFLOW')) return null;
    throw err;
  }
}

/** The same request with no caching at all: every input token at base price, plus output. */
export function noCacheNano(
  usage: Usage,
  info: ModelEntry,
  at: number,
  catalogue: ModelCatalogue = BUILTIN_CATALOGUE,
): number {
  // The band is the same (same prompt length); only the cache classes are billed at base price.
  const rates = ratesFor(info, at, usage, catalogue);
  return exact(totalInputTokens(usage) * rates.input + usage.output_tokens * rates.output);
}
