import { z } from 'zod';
import { ForkcacheError } from '../../core/util/errors.ts';
import { formatZodIssues } from '../../core/util/validation.ts';
import { termsFor } from '../../core/ledger/cost.ts';
import { BUILTIN_CATALOGUE, findModel, type ModelCatalogue, type ModelEntry } from '../../core/models/catalogue.ts';
import { DEFAULT_MODEL } from '../../core/models/defaults.ts';
import { PRICING_HINT } from '../../core/models/status.ts';
import { calendarDate } from '../../core/models/dates.ts';
import { assertPricedOn } from '../../core/models/pricing.ts';
import type { Usage } from '../../core/ledger/usage.ts';
import { CACHE_TTLS, RESPONSES_CACHE_TTLS } from '../../core/wire/cache.ts';
import type { ChildCost, EconomicsInput, EconomicsResult, EconomicsTtl, StrategyCost } from './types.ts';

/** Default model of the economics command: the documentation's recommended model. */
export const DEFAULT_ECONOMICS_MODEL = DEFAULT_MODEL;

/** The reference chapter's read price: 0.1x input, which its figures assume whatever the model. */
const SEED_READ_MULTIPLIER = 0.1;

/**
 * Default fresh-agent system prompt + tool definitions, in tokens: the reference chapter's own
 * figures for the parent (system prompt ~4,000 + tool definitions ~12,000). A fresh agent gets
 * its own system prompt and tools, so it pays these in full, plus the directive.
 */
export const DEFAULT_FRESH_AGENT_TOKENS = 16_000;

// Bounds keep every milli-token-equivalent sum an exact integer (< 2^53).
const MAX_TOKENS = 10_000_000;
const MAX_CHILDREN = 100_000;
const tokens = z.number().int().nonnegative().max(MAX_TOKENS);

const inputSchema = z.strictObject({
  prefixTokens: tokens,
  directiveTokens: tokens,
  children: z.number().int().min(1).max(MAX_CHILDREN),
  model: z.string().min(1).default(DEFAULT_ECONOMICS_MODEL),
  ttl: z.enum([...CACHE_TTLS, ...RESPONSES_CACHE_TTLS]).default('5m'),
  warmParent: z.boolean().default(false),
  cachedPrefixTokens: tokens.optional(),
  freshTokens: tokens.default(DEFAULT_FRESH_AGENT_TOKENS),
  convention: z.enum(['seed', 'real']).default('real'),
  table: z.custom<ModelCatalogue>((v) => typeof v === 'object' && v !== null).optional(),
  date: calendarDate.optional(),
});

/**
 * Whether a write of this lifetime is priced at the row's long rate (`cacheWrite1h`): the
 * Messages API's 1 hour and the Responses API's 12 hours; 5 and 30 minutes take the short one.
 * The ledger prices the Responses API's writes by TTL the same way (`src/core/ledger/cost.ts`).
 */
function isLongWrite(ttl: EconomicsTtl): boolean {
  return ttl === '1h' || ttl === '12h';
}

function invalid(field: string, message: string): ForkcacheError {
  return new ForkcacheError('INVALID_OPTION', `${field}: ${message}`, { data: { field } });
}

/**
 * The break-even N: the smallest N from which on forking costs strictly less than the baseline
 * for every larger N, with first + (N − 1)·later against baseFirst + (N − 1)·baseLater (a
 * baseline's first child may cost more: the first fresh agent writes the head the others read).
 * Null when the baseline is cheaper at large N, even if forking wins a few children first.
 */
export function breakEvenChildren(
  first: number,
  later: number,
  baseFirst: number,
  baseLater = baseFirst,
): number | null {
  if (later > baseLater) return null;
  if (first < baseFirst) return 1;
  if (later === baseLater) return null;
  // first + (N − 1)·later < baseFirst + (N − 1)·baseLater  ⇔  N − 1 > (first − baseFirst) / (baseLater − later)
  return Math.floor((first - baseFirst) / (baseLater - later)) + 2;
}

function ratio(saved: number, baseline: number): number | null {
  return baseline === 0 ? null : saved / baseline;
}

/** One request's input: cache reads, cache writes, uncached input. */
interface Req {
  r: number;
  w: number;
  i: number;
}

/** How one request of a fan-out is priced: rates of its band, cache prices by convention. */
interface Priced {
  nano: number;
  /** Input price of the request's band, nano-dollars per token. */
  input: number;
  read: number;
  write: number;
  band: string | null;
  pricesFrom: string;
}

/** The input checked, with its defaults, and what it prices against. */
interface EconomicsCase {
  opts: z.output<typeof inputSchema>;
  table: ModelCatalogue;
  /** The day priced, as epoch milliseconds (today without `date`). */
  at: number;
  info: ModelEntry;
  /** Prefix, directive, children: P, D, N. */
  P: number;
  D: number;
  N: number;
  /** Prefix tokens the parent has cached already (0 below the minimum cacheable length). */
  C: number;
  /** The prefix reaches the model's minimum cacheable length. */
  cacheable: boolean;
  /** The reference chapter's convention (writes at full price, reads at 0.1x). */
  seed: boolean;
}

/**
 * The check step: the input parsed, its model priced on its date, its TTL one the model's API
 * has, its cached prefix consistent. `field`, `dateField`, `ttlField` name the caller's fields.
 */
export function economicsCase(
  input: EconomicsInput,
  field: string,
  dateField: string,
  ttlField: string,
): EconomicsCase {
  const parsed = inputSchema.safeParse(input);
  if (!parsed.success) throw new ForkcacheError('INVALID_OPTION', `economics: ${formatZodIssues(parsed.error.issues)}`);
  const opts = parsed.data;
  const table = opts.table ?? BUILTIN_CATALOGUE;
  const at = opts.date === undefined ? Date.now() : Date.parse(`${opts.date}T00:00:00Z`);
  const info = findModel(opts.model, table);
  if (!info || info.prices.length === 0) {
    throw invalid(
      field,
      info
        ? `"${opts.model}" has no prices (${info.status}; use ${info.replacement})`
        : `"${opts.model}" is not in the model catalogue (${table.date}): it cannot be priced; ${PRICING_HINT}`,
    );
  }
  // a date before the model's first price row has no prices: say so, do not use later ones
  if (opts.date !== undefined) assertPricedOn(info, at, dateField);
  if ((RESPONSES_CACHE_TTLS as readonly string[]).includes(opts.ttl) && info.provider !== 'openai') {
    throw invalid(
      ttlField,
      `${opts.ttl} is a lifetime of OpenAI's Responses API; ${info.id} is served by ${info.provider} (5m or 1h)`,
    );
  }
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
  return { opts, table, at, info, P, D, N, C, cacheable, seed: opts.convention === 'seed' };
}

/** The price step: one request of the case, at the rates of its band and the cache prices of its convention. */
export function priceRequest({ info, at, table, seed, opts }: EconomicsCase, req: Req): Priced {
  const usage: Usage = {
    input_tokens: req.i,
    cache_creation_input_tokens: req.w,
    cache_read_input_tokens: req.r,
    output_tokens: 0,
  };
  const terms = termsFor(usage, info, at, table);
  const rates = terms.rates;
  // The reference chapter counts writes at full price and reads at 0.1x, whatever the model.
  const write = seed ? rates.input : isLongWrite(opts.ttl) ? rates.cacheWrite1h : rates.cacheWrite5m;
  const read = seed ? rates.input * SEED_READ_MULTIPLIER : rates.cacheRead;
  return {
    nano: req.r * read + req.w * write + req.i * rates.input,
    input: rates.input,
    read,
    write,
    band: terms.band,
    pricesFrom: terms.effectiveFrom,
  };
}

/**
 * The strategies step: the requests of each strategy, priced. A fan-out's first child and the
 * later ones, fresh agents' first and later ones, and a child with no caching at all.
 */
export function priceStrategies(c: EconomicsCase) {
  const { opts, info, P, D, C, cacheable, seed } = c;
  const price = (req: Req): Priced => priceRequest(c, req);
  // A prefix below the minimum cacheable length is neither written nor read.
  const firstUsage: Req = cacheable ? { r: C, w: P - C, i: D } : { r: 0, w: 0, i: P + D };
  const laterUsage: Req = cacheable ? { r: P, w: 0, i: D } : { r: 0, w: 0, i: P + D };
  // Fresh agents (src/core/ledger/fresh-agents.ts) priced as this mode prices a child's first
  // request: F in place of P, the first agent writing it and the others reading it. The seed
  // chapter counts them uncached instead, F + D at full price each.
  const F = opts.freshTokens;
  const freshCached = !seed && F >= info.minCacheableTokens;
  return {
    firstUsage,
    laterUsage,
    first: price(firstUsage),
    later: price(laterUsage),
    freshFirst: price(freshCached ? { r: 0, w: F, i: D } : { r: 0, w: 0, i: F + D }),
    freshLater: price(freshCached ? { r: F, w: 0, i: D } : { r: 0, w: 0, i: F + D }),
    noCache: price({ r: 0, w: 0, i: P + D }),
  };
}

/** A request of the fan-out and its price. */
interface PricedRequest {
  req: Req;
  priced: Priced;
}

/**
 * The savings step: the shared prefix alone, as a share saved against paying it in full
 * (`unit`, the input price of the children's band, per token): the children's side, and all in,
 * with the parent's last request, which writes it when the parent has cached it.
 */
export function prefixSavings(
  c: EconomicsCase,
  first: PricedRequest,
  later: PricedRequest,
  unit: number,
): { forkSide: number | null; allIn: number | null } {
  const { P, N, C, cacheable } = c;
  // The shared prefix alone: what the children pay for it, and the parent's last request.
  const prefixOf = ({ req, priced: p }: PricedRequest): number =>
    Math.min(req.r, P) * p.read +
    Math.min(req.w, P) * p.write +
    Math.max(0, Math.min(req.i, P - req.r - req.w)) * p.input;
  const childrenPrefix = prefixOf(first) + (N - 1) * prefixOf(later);
  const parentReq: Req = C === P && cacheable ? { r: 0, w: P, i: 0 } : { r: 0, w: 0, i: P };
  const parent = priceRequest(c, parentReq);
  const parentPrefix = parent.nano;
  const prefixBaseline = P * unit;
  return {
    forkSide: ratio(N * prefixBaseline - childrenPrefix, N * prefixBaseline),
    allIn: ratio(
      N * prefixBaseline + P * parent.input - childrenPrefix - parentPrefix,
      N * prefixBaseline + P * parent.input,
    ),
  };
}

/**
 * Cost of a fan-out of N children on a P-token prefix with D-token directives, against
 * N fresh agents (each F + D tokens, all at full price: no history, no sharing) and against
 * no caching (each child P + D at full price). Each request is priced with the row in force on
 * `date` and the band of its own prompt length.
 *
 * @example forkEconomics({ prefixTokens: 48_500, directiveTokens: 200, children: 5, convention: 'seed' }).perChild
 * // [{ children: '1', tokenEquivalents: 48700, ... }, { children: '2-5', tokenEquivalents: 5050, ... }]
 */
export function forkEconomics(
  input: EconomicsInput,
  field = 'model',
  dateField = 'date',
  ttlField = 'ttl',
): EconomicsResult {
  const c = economicsCase(input, field, dateField, ttlField);
  const { opts, table, at, info, P, D, N, C, cacheable } = c;
  const { firstUsage, laterUsage, first, later, freshFirst, freshLater, noCache } = priceStrategies(c);
  // Token-equivalents are counted in the children's band: the input price their requests pay.
  const unit = noCache.input;
  const money = (nano: number): StrategyCost => ({ tokenEquivalents: nano / unit, usd: nano / 1e9 });

  const row = (children: string, count: number, u: Req, m: number): ChildCost => ({
    children,
    count,
    cacheReadTokens: u.r,
    cacheWriteTokens: u.w,
    inputTokens: u.i,
    ...money(m),
  });
  const perChild =
    first.nano === later.nano || N === 1
      ? [row(N === 1 ? '1' : `1-${N}`, N, firstUsage, first.nano)]
      : [row('1', 1, firstUsage, first.nano), row(N === 2 ? '2' : `2-${N}`, N - 1, laterUsage, later.nano)];

  const forkTotal = first.nano + (N - 1) * later.nano;
  const freshTotal = freshFirst.nano + (N - 1) * freshLater.nano;
  const noCacheTotal = N * noCache.nano;
  const prefix = prefixSavings(c, { req: firstUsage, priced: first }, { req: laterUsage, priced: later }, unit);
  return {
    convention: opts.convention,
    model: info.id,
    modelTableDate: table.date,
    pricesFrom: later.pricesFrom,
    date: new Date(at).toISOString().slice(0, 10),
    source: info.source,
    readMultiplier: unit === 0 ? 0 : Math.round((later.read / unit) * 1e6) / 1e6,
    band: later.band,
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
    forkSideSavings: prefix.forkSide,
    allInSavings: prefix.allIn,
    breakEven: {
      vsNoCache: breakEvenChildren(first.nano, later.nano, noCache.nano),
      vsFreshAgents: breakEvenChildren(first.nano, later.nano, freshFirst.nano, freshLater.nano),
    },
  };
}
