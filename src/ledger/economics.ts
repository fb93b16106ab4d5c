import { z } from 'zod';
import { ForkcacheError } from '../errors.ts';
import { formatZodIssues } from '../validation.ts';
import { ratesFor } from './cost.ts';
import { DEFAULT_MODEL_TABLE, requireModel, type ModelInfo, type ModelTable } from './models.ts';

/**
 * Break-even economics of one fan-out (input tokens only: every strategy is assumed to produce
 * the same output). See docs/economics.md for the formulas and the worked seed figures.
 *
 * - `seed` convention, as the seed chapter counts: no write premium. Child 1 pays the uncached
 *   part of the prefix at full price; the other children read it at the read multiplier (0.1).
 * - `real` convention: child 1 writes the uncached part at the write multiplier (1.25 for a
 *   5-minute entry, 2 for 1 hour).
 */
export type EconomicsConvention = 'seed' | 'real';
export type EconomicsTtl = '5m' | '1h';

/** Default model of the economics command. */
export const DEFAULT_ECONOMICS_MODEL = 'claude-sonnet-4-5';

/**
 * Default fresh-agent system prompt + tool definitions, in tokens: the seed chapter's own
 * figures for the parent (system prompt ~4,000 + tool definitions ~12,000). A fresh agent gets
 * its own system prompt and tools, so it pays these in full, plus the directive.
 */
export const DEFAULT_FRESH_AGENT_TOKENS = 16_000;

export interface EconomicsInput {
  /** P: shared prefix tokens (system + tools + history + spawning message + placeholders). */
  prefixTokens: number;
  /** D: per-child directive tokens. */
  directiveTokens: number;
  /** N: number of children. */
  children: number;
  model?: string;
  ttl?: EconomicsTtl;
  /** The parent's last turn already cached the whole prefix: every child reads it. */
  warmParent?: boolean;
  /** Of P, how many tokens are already cached (between cold = 0 and warm = P). */
  cachedPrefixTokens?: number;
  /** F: a fresh agent's own system prompt + tools, in tokens. */
  freshTokens?: number;
  convention?: EconomicsConvention;
  table?: ModelTable;
}

/** A group of children that pay the same. Token counts are per child. */
export interface ChildCost {
  /** Which children, e.g. `1`, `2-5`, `1-8`. */
  children: string;
  count: number;
  cacheReadTokens: number;
  /** Written tokens; billed at full price under `seed`, at the write multiplier under `real`. */
  cacheWriteTokens: number;
  inputTokens: number;
  /** Cost of one such child in input-price units. */
  tokenEquivalents: number;
  usd: number;
}

export interface StrategyCost {
  /** Input-price units: the number of full-price input tokens that would cost the same. */
  tokenEquivalents: number;
  usd: number;
}

export interface EconomicsResult {
  convention: EconomicsConvention;
  model: string;
  modelTableDate: string;
  ttl: EconomicsTtl;
  prefixTokens: number;
  directiveTokens: number;
  children: number;
  cachedPrefixTokens: number;
  freshTokens: number;
  /** False when P is below the model's minimum cacheable length: nothing is cached. */
  cacheable: boolean;
  perChild: ChildCost[];
  fork: StrategyCost;
  freshAgents: StrategyCost;
  noCache: StrategyCost;
  /** Fractions of the baseline that forking saves (negative: forking costs more). */
  savingsVsNoCache: number | null;
  savingsVsFreshAgents: number | null;
  /** Smallest N at which forking costs strictly less than the baseline; null: never. */
  breakEven: { vsNoCache: number | null; vsFreshAgents: number | null };
}

// Bounds keep every milli-token-equivalent sum an exact integer (< 2^53).
const MAX_TOKENS = 10_000_000;
const MAX_CHILDREN = 100_000;
const tokens = z.number().int().nonnegative().max(MAX_TOKENS);

const inputSchema = z.strictObject({
  prefixTokens: tokens,
  directiveTokens: tokens,
  children: z.number().int().min(1).max(MAX_CHILDREN),
  model: z.string().min(1).default(DEFAULT_ECONOMICS_MODEL),
  ttl: z.enum(['5m', '1h']).default('5m'),
  warmParent: z.boolean().default(false),
  cachedPrefixTokens: tokens.optional(),
  freshTokens: tokens.default(DEFAULT_FRESH_AGENT_TOKENS),
  convention: z.enum(['seed', 'real']).default('real'),
  table: z.custom<ModelTable>((v) => typeof v === 'object' && v !== null).optional(),
});

function invalid(field: string, message: string): ForkcacheError {
  return new ForkcacheError('INVALID_ARGUMENT', `${field}: ${message}`, { data: { field } });
}

/**
 * Smallest N ≥ 1 with first + (N − 1)·later < N·baseline, all per-child costs in one unit;
 * null when no N qualifies (each extra child saves nothing, and the first does not pay).
 */
export function breakEvenChildren(first: number, later: number, baseline: number): number | null {
  if (first < baseline) return 1;
  if (baseline <= later) return null;
  // first + (N − 1)·later < N·baseline  ⇔  N > (first − later) / (baseline − later)
  return Math.floor((first - later) / (baseline - later)) + 1;
}

/** Multipliers in thousandths, so token-equivalents are exact integers until the last step. */
function milli(multiplier: number): number {
  return Math.round(multiplier * 1000);
}

function ratio(saved: number, baseline: number): number | null {
  return baseline === 0 ? null : saved / baseline;
}

/**
 * Cost of a fan-out of N children on a P-token prefix with D-token directives, against
 * N fresh agents (each F + D tokens, all at full price: no history, no sharing) and against
 * no caching (each child P + D at full price).
 *
 * @example forkEconomics({ prefixTokens: 48_500, directiveTokens: 200, children: 5, convention: 'seed' }).perChild
 * // [{ children: '1', tokenEquivalents: 48700, ... }, { children: '2-5', tokenEquivalents: 5050, ... }]
 */
export function forkEconomics(input: EconomicsInput): EconomicsResult {
  const parsed = inputSchema.safeParse(input);
  if (!parsed.success) throw new ForkcacheError('INVALID_ARGUMENT', `economics: ${formatZodIssues(parsed.error.issues)}`);
  const opts = parsed.data;
  const table = opts.table ?? DEFAULT_MODEL_TABLE;
  const info: ModelInfo = requireModel(opts.model, table, 'model');
  const P = opts.prefixTokens;
  const D = opts.directiveTokens;
  const N = opts.children;
  if (opts.cachedPrefixTokens !== undefined && opts.cachedPrefixTokens > P) {
    throw invalid('cachedPrefixTokens', `${opts.cachedPrefixTokens} exceeds prefixTokens (${P})`);
  }
  if (opts.warmParent && opts.cachedPrefixTokens !== undefined && opts.cachedPrefixTokens !== P) {
    throw invalid('cachedPrefixTokens', 'contradicts warmParent (a warm parent has cached the whole prefix)');
  }
  const cacheable = P >= info.minCacheableTokens;
  const C = !cacheable ? 0 : opts.warmParent ? P : (opts.cachedPrefixTokens ?? 0);

  const read = milli(info.cacheReadMultiplier);
  const write = opts.convention === 'seed' ? 1000 : milli(opts.ttl === '1h' ? info.cacheWrite1hMultiplier : info.cacheWrite5mMultiplier);
  const rateNano = ratesFor(info).input;
  const money = (milliTokens: number): StrategyCost => ({ tokenEquivalents: milliTokens / 1000, usd: (milliTokens * rateNano) / 1e12 });

  // A prefix below the minimum cacheable length is neither written nor read.
  const firstUsage = cacheable ? { r: C, w: P - C, i: D } : { r: 0, w: 0, i: P + D };
  const laterUsage = cacheable ? { r: P, w: 0, i: D } : { r: 0, w: 0, i: P + D };
  const firstMilli = firstUsage.r * read + firstUsage.w * write + firstUsage.i * 1000;
  const laterMilli = laterUsage.r * read + laterUsage.w * write + laterUsage.i * 1000;
  const freshMilli = (opts.freshTokens + D) * 1000;
  const noCacheMilli = (P + D) * 1000;

  const row = (children: string, count: number, u: { r: number; w: number; i: number }, m: number): ChildCost => ({
    children,
    count,
    cacheReadTokens: u.r,
    cacheWriteTokens: u.w,
    inputTokens: u.i,
    ...money(m),
  });
  const perChild =
    firstMilli === laterMilli || N === 1
      ? [row(N === 1 ? '1' : `1-${N}`, N, firstUsage, firstMilli)]
      : [row('1', 1, firstUsage, firstMilli), row(N === 2 ? '2' : `2-${N}`, N - 1, laterUsage, laterMilli)];

  const forkTotal = firstMilli + (N - 1) * laterMilli;
  const freshTotal = N * freshMilli;
  const noCacheTotal = N * noCacheMilli;
  return {
    convention: opts.convention,
    model: info.id,
    modelTableDate: table.date,
    ttl: opts.ttl,
    prefixTokens: P,
    directiveTokens: D,
    children: N,
    cachedPrefixTokens: C,
    freshTokens: opts.freshTokens,
    cacheable,
    perChild,
    fork: money(forkTotal),
    freshAgents: money(freshTotal),
    noCache: money(noCacheTotal),
    savingsVsNoCache: ratio(noCacheTotal - forkTotal, noCacheTotal),
    savingsVsFreshAgents: ratio(freshTotal - forkTotal, freshTotal),
    breakEven: {
      vsNoCache: breakEvenChildren(firstMilli, laterMilli, noCacheMilli),
      vsFreshAgents: breakEvenChildren(firstMilli, laterMilli, freshMilli),
    },
  };
}
