import type { Usage } from './usage.ts';

/**
 * How the prompt cache splits one agent's successive requests when each extends the one
 * before and carries a marker on its last block (forks and fresh agents alike): a request
 * reads the longest prefix already cached for it — its own previous request, or for its first
 * the shared head another agent wrote — and writes the rest up to its marker. A request
 * shorter than the model's minimum cacheable length is neither read nor written: all of it is
 * uncached input. The estimator and the fresh-agents baseline both price turns this way, so
 * the two can never disagree about what a turn costs.
 *
 * @param totals each request's total input tokens, in order
 * @param firstReadable of the first request, the tokens another agent already cached (0: none)
 * @param outputs each request's output tokens
 */
export function cachedTurns(
  totals: readonly number[],
  firstReadable: number,
  outputs: readonly number[],
  minCacheable: number,
): Usage[] {
  let cached = firstReadable;
  return totals.map((total, k) => {
    const output_tokens = outputs[k] ?? 0;
    if (total < minCacheable || total <= 0)
      return { input_tokens: total, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens };
    const read = Math.min(cached, total);
    cached = total;
    return { input_tokens: 0, cache_creation_input_tokens: total - read, cache_read_input_tokens: read, output_tokens };
  });
}
