/**
 * The `retry-after` header as the API writes it (`retry-after-ms`, `retry-after` in seconds or
 * an HTTP-date), read within [0, an hour]. What a client waits is the gate's policy
 * (src/core/gate/admission/retry-wait.ts): this file only says what the header means, and refuses
 * to read garbage as a number (`Number('')` is 0, `Date.parse('1')` is 2001).
 */

/** What a parsed `retry-after` may be at most, whatever the policy (an hour: far below the timer's 24.8 days). */
export const RETRY_AFTER_MAX_MS = 3_600_000;

const DECIMAL = /^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/;

/**
 * A `retry-after` header value as milliseconds in [0, `RETRY_AFTER_MAX_MS`]: a decimal number
 * of seconds (`ms` true: of milliseconds), or an HTTP-date relative to `now`; undefined when
 * it is neither (`abc`, `Infinity`, `0x10`, empty).
 */
export function readRetryAfter(value: string | undefined, now: number, ms = false): number | undefined {
  if (value === undefined) return undefined;
  const bound = (x: number): number => Math.min(RETRY_AFTER_MAX_MS, Math.max(0, x));
  if (DECIMAL.test(value)) {
    const n = Number(value) * (ms ? 1 : 1000);
    return Number.isFinite(n) ? bound(n) : RETRY_AFTER_MAX_MS;
  }
  // An HTTP-date names a weekday or month: a bare word or number is not one (`Date.parse('1')` is 2001).
  if (ms || !/[a-z]{3}/i.test(value) || !/\d/.test(value)) return undefined;
  const date = Date.parse(value);
  return Number.isFinite(date) ? bound(date - now) : undefined;
}
