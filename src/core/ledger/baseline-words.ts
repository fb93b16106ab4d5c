import { FRESH_AGENTS_SENTENCE } from './fresh-agents.ts';

/**
 * The words every place that prints the baselines uses (run summary, report, economics, bench),
 * so the two names mean one thing each wherever they appear.
 */
const NO_CACHE_SENTENCE = 'no cache: the same requests, every input token at the base price';

/** One line that says what both baselines are. */
export const BASELINES_NOTE = `${NO_CACHE_SENTENCE}; ${FRESH_AGENTS_SENTENCE}`;

/** `saved 12.3%`, or `cost 4.0% more` when the run cost more than the baseline; `n/a` without one. */
export function savedAgainst(fraction: number | null | undefined): string {
  if (fraction === null || fraction === undefined) return 'n/a';
  return fraction >= 0 ? `saved ${(100 * fraction).toFixed(1)}%` : `cost ${(-100 * fraction).toFixed(1)}% more`;
}
