import type { ModelCatalogue } from '../../core/models/catalogue.ts';
import type { CacheTtl, ResponsesCacheTtl } from '../../core/wire/cache.ts';

/**
 * Break-even economics of one fan-out (input tokens only: every strategy is assumed to produce
 * the same output). See docs/economics.md for the formulas and the worked seed figures.
 *
 * - `seed` convention, as the reference chapter counts: no write premium. Child 1 pays the uncached
 *   part of the prefix at full price; the other children read it at the read multiplier (0.1).
 * - `real` convention: child 1 writes the uncached part at the write multiplier (1.25 for a
 *   5-minute entry, 2 for 1 hour; on the Responses API a 30-minute entry at the row's 5-minute
 *   rate, a 12-hour one at its 1-hour rate).
 */
export type EconomicsConvention = 'seed' | 'real';
/**
 * The lifetime of the prefix's write: the Messages API's `5m`/`1h`, or the Responses API's
 * `30m`/`12h` (OpenAI models only), priced at the row's short and long write rates as the
 * ledger prices them (`src/core/ledger/cost.ts`).
 */
export type EconomicsTtl = CacheTtl | ResponsesCacheTtl;

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
  table?: ModelCatalogue;
  /** The date whose prices apply (YYYY-MM-DD); default today. */
  date?: string;
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
  /** The price row used (its effectiveFrom) and the date priced. */
  pricesFrom: string;
  date: string;
  /** Where the prices come from and the date of that copy (third-party copies say so). */
  source: { name: string; retrieved: string; thirdParty: boolean };
  /** Read price / input price of the children's requests (0.1 under the seed convention). */
  readMultiplier: number;
  /** The prompt-length band the children's requests fall in (banded models), else null. */
  band: string | null;
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
  /**
   * Saving on the shared prefix alone, children only: what N children pay for P tokens each
   * against paying them uncached. 1 − r with a warm parent.
   */
  forkSideSavings: number | null;
  /**
   * Saving on the shared prefix with the parent's last request counted too: with a warm parent
   * it wrote P (at the write price), cold it sent P uncached; baseline (N + 1)·P uncached.
   */
  allInSavings: number | null;
  /** Smallest N at which forking costs strictly less than the baseline; null: never. */
  breakEven: { vsNoCache: number | null; vsFreshAgents: number | null };
}
