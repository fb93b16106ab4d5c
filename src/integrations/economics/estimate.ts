import { ForkcacheError } from '../../core/util/errors.ts';
import { findModel } from '../../core/models/catalogue.ts';
import { assertPricedOn, priceTerms } from '../../core/models/pricing.ts';
import { PRICING_HINT, isoDay } from '../../core/models/status.ts';
import { cachedTurns } from '../../core/ledger/cache-turns.ts';
import { costNano, nanoToUsd, noCacheNano } from '../../core/ledger/cost.ts';
import type { EstimateInput, EstimatedFork, RunEstimate } from './estimate-types.ts';
import { freshAgentUsages, type ForkTurns } from '../../core/ledger/fresh-agents.ts';
import { requestBoundNano } from '../../core/ledger/spend-bound.ts';
import { sumUsage, totalInputTokens, type Usage } from '../../core/ledger/usage.ts';

/**
 * A fork's requests as totals and outputs: request 1 is P + D; each tool turn adds its output,
 * its result and the framing; the last request's output is the report.
 */
export function forkTurns(
  fork: EstimatedFork,
  sharedTokens: number,
  overhead: number,
): { inputs: number[]; outputs: number[] } {
  const inputs = [sharedTokens + fork.directiveTokens];
  const outputs: number[] = [];
  for (const turn of fork.turns) {
    outputs.push(turn.output);
    inputs.push(inputs[inputs.length - 1]! + turn.output + turn.result + overhead);
  }
  outputs.push(fork.reportTokens);
  return { inputs, outputs };
}

/** A usage's writes, all for `ttl` (the split that prices them; `5m` needs none). */
function writtenFor(u: Usage, ttl: NonNullable<EstimateInput['writeTtl']>): Usage {
  const w = u.cache_creation_input_tokens;
  if (ttl === '5m' || w === 0) return u;
  const none = { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 };
  const split =
    ttl === '1h'
      ? { ...none, ephemeral_1h_input_tokens: w }
      : ttl === '30m'
        ? { ...none, ttl_30m_input_tokens: w }
        : { ...none, ttl_12h_input_tokens: w };
  return { ...u, cache_creation: split };
}

/**
 * Estimate what a whole fan-out will cost: every request of every fork, cached as the engine
 * sends them (the moving marker on each request's last block, the boundary marker on the shared
 * prefix), priced with the model's row in force at `at`. The cache behaviour:
 *
 * - `first-child`: the first fork writes the shared prefix P, every other fork reads it (the
 *   engine holds them until the first response begins); `prewarm`: one `max_tokens: 0` request
 *   writes P, then every fork reads it; `none`: nobody waits, so every fork is assumed to write P
 *   (the dearest case). A prefix below the model's minimum cacheable length is never cached.
 * - each later request of a fork reads its previous request and writes its own growth.
 * - cache entries are assumed to live as long as the run (a run slower than the TTL pays more).
 * - every write is priced for `writeTtl` (default 5m; `1h` and OpenAI's `12h` at the long write
 *   rate); the warm-up generates `warmupOutput` tokens (a Chat Completions warm-up: one).
 *
 * Pure: the token counts are the caller's (the CLI counts them with the provider's endpoint).
 */
export function estimateRun(input: EstimateInput): RunEstimate {
  const info = findModel(input.model, input.table);
  if (!info || info.prices.length === 0) {
    throw new ForkcacheError(
      'INVALID_OPTION',
      info
        ? `model: "${input.model}" has no prices (${info.status}; use ${info.replacement})`
        : `model: "${input.model}" is not in the model catalogue (${input.table.date}): the run cannot be estimated in dollars; ${PRICING_HINT}`,
      { data: { field: 'model' } },
    );
  }
  assertPricedOn(info, input.at, 'date');
  if (input.forks.length === 0)
    throw new ForkcacheError('INVALID_OPTION', 'forks: nothing to estimate', { data: { field: 'forks' } });
  const P = input.sharedTokens;
  const min = info.minCacheableTokens;
  const shared = P >= min ? P : 0;
  const start = Math.min(input.cachedAtStart ?? 0, shared);
  const ttl = input.writeTtl ?? '5m';
  const price = (u: Usage): number => costNano(u, info, input.at, input.table).total;
  const turns = (totals: readonly number[], readable: number, outputs: readonly number[]): Usage[] =>
    cachedTurns(totals, readable, outputs, min).map((u) => writtenFor(u, ttl));

  const warmups: Usage[] = input.warm === 'prewarm' && shared > 0 ? turns([P], start, [input.warmupOutput ?? 0]) : [];
  const shapes: ForkTurns[] = [];
  const perFork: number[] = [];
  const usages: Usage[] = [...warmups];
  let requests = warmups.length;
  input.forks.forEach((fork, i) => {
    const { inputs, outputs } = forkTurns(fork, P, input.turnOverhead);
    const readsShared = input.warm === 'prewarm' || (input.warm === 'first-child' && i > 0);
    const own = turns(inputs, readsShared ? shared : start, outputs);
    usages.push(...own);
    requests += own.length;
    perFork.push(own.reduce((sum, u) => sum + price(u), 0));
    shapes.push({ inputs, outputs, freshFirst: input.freshHeadTokens + fork.directiveTokens });
  });

  const total = sumUsage(usages);
  const actual = usages.reduce((sum, u) => sum + price(u), 0);
  const noCache = usages.reduce((sum, u) => sum + noCacheNano(u, info, input.at, input.table), 0);
  const fresh = freshAgentUsages(shapes, input.freshHeadTokens, min)
    .flat()
    .reduce((sum, u) => sum + price(writtenFor(u, ttl)), 0);
  const parts = usages.reduce(
    (acc, u) => {
      const c = costNano(u, info, input.at, input.table);
      return {
        input: acc.input + c.input,
        cacheWrite: acc.cacheWrite + c.cacheWrite5m + c.cacheWrite1h,
        cacheRead: acc.cacheRead + c.cacheRead,
        output: acc.output + c.output,
      };
    },
    { input: 0, cacheWrite: 0, cacheRead: 0, output: 0 },
  );
  const largest = Math.max(0, ...usages.map(totalInputTokens));
  const terms = priceTerms(info, input.table, input.at, { input: largest, cacheWrite: 0, cacheRead: 0 });
  const ratio = (saved: number, base: number): number | null => (base === 0 ? null : saved / base);
  const dearest = perFork.indexOf(Math.max(...perFork));
  return {
    model: info.id,
    pricesFrom: terms?.effectiveFrom ?? '',
    date: isoDay(input.at),
    source: info.source,
    modelTableDate: input.table.date,
    forks: input.forks.length,
    requests,
    tokens: {
      input: total.input_tokens,
      cacheWrite: total.cache_creation_input_tokens,
      cacheRead: total.cache_read_input_tokens,
      output: total.output_tokens,
    },
    cost: {
      usd: nanoToUsd(actual),
      input: nanoToUsd(parts.input),
      cacheWrite: nanoToUsd(parts.cacheWrite),
      cacheRead: nanoToUsd(parts.cacheRead),
      output: nanoToUsd(parts.output),
    },
    noCacheUsd: nanoToUsd(noCache),
    freshAgentsUsd: nanoToUsd(fresh),
    savingsVsNoCache: ratio(noCache - actual, noCache),
    savingsVsFreshAgents: ratio(fresh - actual, fresh),
    perFork: {
      minUsd: nanoToUsd(Math.min(...perFork)),
      maxUsd: nanoToUsd(Math.max(...perFork)),
      meanUsd: nanoToUsd(perFork.reduce((a, b) => a + b, 0) / Math.max(1, perFork.length)),
      dearest,
    },
    requestBoundUsd: nanoToUsd(requestBoundNano(info, input.table, input.at, largest, input.maxTokens)),
    warmups: warmups.length,
  };
}
