import { BASELINES_NOTE } from '../src/core/ledger/baseline-words.ts';
import type { LedgerSummary } from '../src/core/ledger/summary.ts';

const round = (x: number | null, digits: number): number | null =>
  x === null ? null : Math.round(x * 10 ** digits) / 10 ** digits;

/**
 * What the baseline columns of the economics suites mean, said once beside their tables. The
 * `fresh-agents` arm is fresh agents actually run (the fallback prompt, no parent history, their
 * head shared through the cache): the strategy the `fresh_agents_usd` baseline models from a
 * fork arm's own turns.
 */
export const BENCH_BASELINES_NOTE = `Baselines from each arm's own ledger — ${BASELINES_NOTE}. The fresh-agents arm is that strategy run: its cost differs from the baseline by what its agents really did.`;

/**
 * The baseline columns of a benchmark row, from the run's own ledger: the one fresh-agents
 * figure (src/core/ledger/fresh-agents.ts) and the no-cache one, as the run summary prints them.
 */
export function baselineColumns(summary: Pick<LedgerSummary, 'cost_usd'>): {
  no_cache_usd: number | null;
  fresh_agents_usd: number | null;
} {
  return {
    no_cache_usd: round(summary.cost_usd.no_cache, 4),
    fresh_agents_usd: round(summary.cost_usd.fresh_agents, 4),
  };
}
