import { readRetryAfter } from './retry-after.ts';

/**
 * The API's rate-limit headers: `anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-
 * {limit,remaining,reset}` on every response, `retry-after` (seconds) on a 429. The emulator
 * writes them; the admission scheduler learns the limits from them.
 */
const RATE_LIMIT_KINDS = ['requests', 'tokens', 'input-tokens', 'output-tokens'] as const;
export type RateLimitKind = (typeof RATE_LIMIT_KINDS)[number];

export interface BucketHeader {
  limit: number;
  remaining: number;
  /** Epoch ms when the bucket is full again (RFC 3339 on the wire). */
  resetAt: number | undefined;
}

export type RateLimitHeaders = Partial<Record<RateLimitKind, BucketHeader>>;

const header = (kind: RateLimitKind, field: 'limit' | 'remaining' | 'reset'): string =>
  `anthropic-ratelimit-${kind}-${field}`;

/** Header name → value, for a response. */
export function formatRateLimitHeaders(buckets: RateLimitHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const kind of RATE_LIMIT_KINDS) {
    const b = buckets[kind];
    if (!b) continue;
    out[header(kind, 'limit')] = String(b.limit);
    out[header(kind, 'remaining')] = String(Math.max(0, Math.floor(b.remaining)));
    if (b.resetAt !== undefined)
      out[header(kind, 'reset')] = new Date(b.resetAt).toISOString().replace(/\.\d{3}Z$/, 'Z');
  }
  return out;
}

type HeaderSource = { get(name: string): string | null } | Record<string, string | string[] | undefined>;

function read(source: HeaderSource, name: string): string | undefined {
  if (typeof (source as { get?: unknown }).get === 'function')
    return (source as { get(name: string): string | null }).get(name) ?? undefined;
  const value = (source as Record<string, string | string[] | undefined>)[name];
  return Array.isArray(value) ? value[0] : value;
}

/** Parse the rate-limit headers of a response (a fetch `Headers` or a plain record); absent kinds are left out. */
export function parseRateLimitHeaders(source: HeaderSource): RateLimitHeaders {
  const out: RateLimitHeaders = {};
  for (const kind of RATE_LIMIT_KINDS) {
    const limit = Number(read(source, header(kind, 'limit')));
    const remaining = Number(read(source, header(kind, 'remaining')));
    if (!Number.isFinite(limit) || !Number.isFinite(remaining)) continue;
    const reset = read(source, header(kind, 'reset'));
    const resetAt = reset === undefined ? undefined : Date.parse(reset);
    out[kind] = { limit, remaining, resetAt: Number.isFinite(resetAt) ? resetAt : undefined };
  }
  return out;
}

/**
 * `retry-after-ms`, else `retry-after` in seconds (or an HTTP date), as milliseconds within
 * [0, an hour]; undefined when absent or unreadable (see `readRetryAfter`: a garbage value is
 * no value, and the caller's backoff applies).
 */
export function parseRetryAfterMs(source: HeaderSource, now = Date.now()): number | undefined {
  return readRetryAfter(read(source, 'retry-after-ms'), now, true) ?? readRetryAfter(read(source, 'retry-after'), now);
}

/** The `error_code`s of a 429 body (`error.details.error_code`); none means an ordinary limit. */
export const RAMP_LIMIT_EXCEEDED = 'ramp_limit_exceeded';
export const SPEND_LIMIT_REACHED = 'enforced_spend_limit_reached';
