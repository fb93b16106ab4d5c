import { ForkcacheError } from '../errors.ts';
import { DEFAULT_MODEL_TABLE, requireModel, type ModelInfo, type ModelTable } from './models.ts';
import { creationSplit, normalizeUsage, totalInputTokens, type Usage, type UsageInput } from './usage.ts';

/**
 * Money is computed in integer nano-dollars (1e-9 USD) and converted to USD once, at the end,
 * so sums never pick up float noise (3 × 0.1 is not 0.3 in binary floating point).
 * A price of $X per million tokens is X micro-dollars, i.e. 1000·X nano-dollars, per token:
 * an integer for any price with at most three decimals ($0.001/MTok), which every published
 * price is. Finer user prices are rounded to that resolution.
 */
export interface Rates {
  input: number;
  cacheWrite5m: number;
  cacheWrite1h: number;
  cacheRead: number;
  output: number;
}

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

/** Per-token rates of a model in nano-dollars (integers). */
export function ratesFor(info: ModelInfo): Rates {
  const nano = (perMTok: number, multiplier = 1): number => Math.round(perMTok * multiplier * 1000);
  return {
    input: nano(info.inputPerMTok),
    cacheWrite5m: nano(info.inputPerMTok, info.cacheWrite5mMultiplier),
    cacheWrite1h: nano(info.inputPerMTok, info.cacheWrite1hMultiplier),
    cacheRead: nano(info.inputPerMTok, info.cacheReadMultiplier),
    output: nano(info.outputPerMTok),
  };
}

function exact(value: number): number {
  // Past 2^53 integers stop being exact; at these rates that is millions of dollars.
  if (!Number.isSafeInteger(value)) throw new ForkcacheError('INTERNAL', `cost overflow: ${value} nano-dollars is not a safe integer`);
  return value;
}

/** Cost of one usage in integer nano-dollars, by component. */
export function costNano(usage: Usage, info: ModelInfo): CostBreakdown {
  const rates = ratesFor(info);
  const split = creationSplit(usage);
  const parts = {
    input: exact(usage.input_tokens * rates.input),
    cacheWrite5m: exact(split.ephemeral_5m_input_tokens * rates.cacheWrite5m),
    cacheWrite1h: exact(split.ephemeral_1h_input_tokens * rates.cacheWrite1h),
    cacheRead: exact(usage.cache_read_input_tokens * rates.cacheRead),
    output: exact(usage.output_tokens * rates.output),
  };
  return { ...parts, total: exact(parts.input + parts.cacheWrite5m + parts.cacheWrite1h + parts.cacheRead + parts.output) };
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
 * Cost of one request in USD. Writes use the `cache_creation` TTL split when present,
 * otherwise all writes are billed as 5-minute writes. `total` is computed in nano-dollars
 * before conversion, so it equals the hand-computed figure exactly.
 *
 * @example costUsd({ input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 1_000_000, output_tokens: 0 }, 'claude-sonnet-4-5').total // 0.3
 */
export function costUsd(usage: Usage | UsageInput, model: string | ModelInfo, table: ModelTable = DEFAULT_MODEL_TABLE): CostBreakdown {
  const info = typeof model === 'string' ? requireModel(model, table) : model;
  return breakdownToUsd(costNano(normalizeUsage(usage), info));
}

/** The same request with no caching at all: every input token at base price, plus output. */
export function noCacheNano(usage: Usage, info: ModelInfo): number {
  const rates = ratesFor(info);
  return exact(totalInputTokens(usage) * rates.input + usage.output_tokens * rates.output);
}
