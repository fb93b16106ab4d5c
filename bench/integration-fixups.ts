import type { TranscriptTurn } from '../src/core/run-dir/transcript-reader.ts';

/** One fixed fork's fix-up turn set against re-running that fork (bench/integration.ts). */
export interface FixupCost {
  /** The fork's first run: its requests up to the one the fix-up prompt followed. */
  firstUsd: number;
  /** Its fix-up turn: the requests after that prompt. */
  fixupUsd: number;
  /**
   * Re-running the fork from scratch to the same end: its first run again (the same directive
   * breaks the merged tree the same way, the check's output comes only after the merge), then
   * the same fix. The fix-up turn replaces all of it.
   */
  rerunUsd: number;
  /** Whether the fix-up's first request read the fork's whole history from the cache (not written again). */
  historyCached: boolean;
}

const sent = (t: TranscriptTurn): number =>
  t.request.usage.input_tokens + t.request.usage.cache_read_input_tokens + t.request.usage.cache_creation_input_tokens;

/**
 * The cost of a fork's fix-up turn, of its first run, and of a re-run from scratch, from its
 * transcript's turns (`usd` prices a set of turns as the ledger does). Undefined for a fork with
 * no fix-up prompt.
 */
export function fixupCostOf(
  turns: readonly TranscriptTurn[],
  usd: (turns: readonly TranscriptTurn[]) => number,
): FixupCost | undefined {
  const at = turns.findIndex((t) => t.prompt?.reason === 'fixup');
  if (at < 0 || at + 1 >= turns.length) return undefined;
  const firstUsd = usd(turns.slice(0, at + 1));
  const fixupUsd = usd(turns.slice(at + 1));
  return {
    firstUsd,
    fixupUsd,
    rerunUsd: firstUsd + fixupUsd,
    historyCached: turns[at + 1]!.request.usage.cache_read_input_tokens >= sent(turns[at]!),
  };
}

/** Max and mean of ratios, 3 significant digits (NaN for none). */
export function maxMean(values: readonly number[]): { max: number; mean: number } {
  const r = (n: number): number => Number(n.toPrecision(3));
  if (values.length === 0) return { max: Number.NaN, mean: Number.NaN };
  return { max: r(Math.max(...values)), mean: r(values.reduce((a, b) => a + b, 0) / values.length) };
}
