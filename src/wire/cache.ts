/**
 * The API's prompt-cache vocabulary, as both sides of the wire need it: the client side
 * (snapshot, prefix, engine, loop) that places markers, and the emulator and proxy that read
 * them. One home, so the two cannot drift apart; nothing here imports forkcache.
 */

/** The cache lifetimes the API accepts in `cache_control.ttl`; `5m` is the default. */
export const CACHE_TTLS = ['5m', '1h'] as const;
export type CacheTtl = (typeof CACHE_TTLS)[number];
export const DEFAULT_CACHE_TTL: CacheTtl = '5m';

/** How long an entry lives without a hit, per lifetime name (a hit refreshes it). */
export const CACHE_TTL_MS: Readonly<Record<CacheTtl, number>> = { '5m': 5 * 60_000, '1h': 60 * 60_000 };

/** The API refuses a request with more `cache_control` blocks than this. */
export const MAX_CACHE_MARKERS = 4;
