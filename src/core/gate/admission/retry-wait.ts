import { z } from 'zod';
import { RETRY_AFTER_MAX_MS } from '../../rate-limits/retry-after.ts';

/**
 * How long to wait before trying again after a 429 or 529: the API's `retry-after` read
 * within bounds, with jitter. Without bounds, `retry-after: 0` (or negative) sent 175 requests
 * in the first second, `abc` retried every second forever, and `1e12` overflowed the timer
 * (`TimeoutOverflowWarning`: Node then fires it at once) or waited for ever.
 *
 * The mapping (RELIABILITY.md, "Bounded retries"):
 * - `retry-after-ms: N` or `retry-after: N` seconds, N a plain decimal number: N, raised to the
 *   floor (so 0 and negatives wait the floor) and cut to the ceiling (so `1e12` waits the
 *   ceiling);
 * - an HTTP-date: the time until then, within the same bounds (a past date waits the floor);
 * - absent or unreadable (`abc`, `Infinity`, empty): the floor doubling with each consecutive
 *   failure (1 s, 2 s, 4 s, …), up to the ceiling;
 * - then jitter: up to `jitter` × the wait more (never less: the API is not asked sooner than it said).
 */
export interface RetryAfterPolicy {
  /** The shortest wait (default 1 s). */
  floorMs: number;
  /** The longest wait before jitter (default 60 s: the API's limits are per minute; at most an hour). */
  ceilingMs: number;
  /** Extra wait, as a share of the wait, drawn uniformly (default 0.2). */
  jitter: number;
}

export const DEFAULT_RETRY_AFTER: RetryAfterPolicy = { floorMs: 1_000, ceilingMs: 60_000, jitter: 0.2 };

/** The policy as an option (every field optional; bad values name the field). */
export const retryAfterOptionsSchema = z.strictObject({
  floorMs: z.number().int().nonnegative().max(RETRY_AFTER_MAX_MS).optional(),
  ceilingMs: z.number().int().nonnegative().max(RETRY_AFTER_MAX_MS).optional(),
  jitter: z.number().min(0).max(1).optional(),
});

/**
 * The wait before the next attempt: `retryAfterMs` (as `parseRetryAfterMs` read it) within the
 * policy's floor and ceiling, or the floor doubling per consecutive `failures` (1 for the
 * first) when the API gave none it could read; plus jitter from `random` (0..1).
 */
export function retryWaitMs(
  retryAfterMs: number | undefined,
  failures: number,
  policy: RetryAfterPolicy = DEFAULT_RETRY_AFTER,
  random: () => number = Math.random,
): number {
  const asked = retryAfterMs ?? policy.floorMs * 2 ** Math.min(30, Math.max(0, failures - 1));
  const ceiling = Math.min(policy.ceilingMs, RETRY_AFTER_MAX_MS);
  const wait = Math.min(ceiling, Math.max(Math.min(policy.floorMs, ceiling), asked));
  return Math.round(wait * (1 + policy.jitter * Math.min(1, Math.max(0, random()))));
}
