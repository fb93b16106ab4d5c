import type { ModelCatalogue } from '../../core/models/catalogue.ts';
import type { CacheTtl, ResponsesCacheTtl } from '../../core/wire/cache.ts';

/**
 * What the whole-run estimator (estimate.ts) is given. Token counts come from the provider's
 * count where it has one (the CLI's `--dry-run` counts them); everything about the turns a fork
 * will make is an assumption, and each is listed in the result beside the figures.
 */

/** One turn a fork is expected to make before its report: what it writes, what it reads back. */
export interface EstimatedTurn {
  /** What the turn is (`read src/a.ts (1/2)`, `edit src/a.ts`): shown in the assumptions. */
  label: string;
  /** Output tokens of the turn (the tool call and what leads to it). */
  output: number;
  /** Tokens of the tool result it gets back (a file's text for a read). */
  result: number;
}

export interface EstimatedFork {
  /** Tokens of the fork's own part of its first request: its wrapped directive (D). */
  directiveTokens: number;
  /** Tool turns before the report, in order. */
  turns: readonly EstimatedTurn[];
  /** Output tokens of the final turn (the report). */
  reportTokens: number;
}

export type EstimateWarm = 'first-child' | 'prewarm' | 'none';

export interface EstimateInput {
  model: string;
  table: ModelCatalogue;
  /** When the run is priced (epoch ms): picks each model's price row. */
  at: number;
  /** P: tokens of the frozen shared prefix. */
  sharedTokens: number;
  /** Of P, what is already cached when the run starts (a plan's parent: usually nothing). */
  cachedAtStart?: number;
  warm: EstimateWarm;
  /** F: the fresh-agent system prompt + tools (the fresh-agents baseline). */
  freshHeadTokens: number;
  forks: readonly EstimatedFork[];
  /** Tokens each turn adds besides its output and result (message and tool-result framing). */
  turnOverhead: number;
  /** `max_tokens` of a fork request: the upper bound `--max-usd` reserves per request. */
  maxTokens: number;
  /**
   * Output tokens of the warm-up request (`warm: 'prewarm'`): 0 for the Messages API's
   * `max_tokens: 0` and the Responses API's `prewarm` (the default), 1 for a Chat Completions warm-up.
   */
  warmupOutput?: number;
  /**
   * How long every write lives, which prices it: `5m` (the default) and OpenAI's `30m` at the
   * short write rate, `1h` and `12h` at the long one.
   */
  writeTtl?: CacheTtl | ResponsesCacheTtl;
}

/** A cost in USD with its parts, as the ledger splits one. */
export interface EstimatedCost {
  usd: number;
  input: number;
  cacheWrite: number;
  cacheRead: number;
  output: number;
}

export interface RunEstimate {
  model: string;
  /** The price row used (its effectiveFrom), the day priced, and where the prices come from. */
  pricesFrom: string;
  date: string;
  source: { name: string; retrieved: string; thirdParty: boolean };
  modelTableDate: string;
  forks: number;
  requests: number;
  /** Token totals over every estimated request. */
  tokens: { input: number; cacheWrite: number; cacheRead: number; output: number };
  cost: EstimatedCost;
  /** The same requests without caching, and as fresh agents (src/core/ledger/fresh-agents.ts). */
  noCacheUsd: number;
  freshAgentsUsd: number;
  savingsVsNoCache: number | null;
  savingsVsFreshAgents: number | null;
  /** The fork estimated dearest and cheapest (index into the directives), and the mean. */
  perFork: { minUsd: number; maxUsd: number; meanUsd: number; dearest: number };
  /** The largest upper bound `--max-usd` reserves for one request of this run. */
  requestBoundUsd: number;
  /** Warm-up requests in the estimate (a `prewarm`). */
  warmups: number;
}
