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

/**
 * The lifetimes OpenAI's Responses API accepts in `prompt_cache_options.ttl` (a minimum
 * lifetime per breakpoint); `30m` is its default. They name the writes in its usage
 * (`cache_write_tokens_details.ttl_30m_tokens`, `ttl_12h_tokens`).
 */
export const RESPONSES_CACHE_TTLS = ['30m', '12h'] as const;
export type ResponsesCacheTtl = (typeof RESPONSES_CACHE_TTLS)[number];
export const DEFAULT_RESPONSES_CACHE_TTL: ResponsesCacheTtl = '30m';

export const RESPONSES_CACHE_TTL_MS: Readonly<Record<ResponsesCacheTtl, number>> = {
  '30m': 30 * 60_000,
  '12h': 12 * 60 * 60_000,
};

/** Breakpoints a Responses request writes at most (the latest ones; earlier ones are not written). */
export const MAX_RESPONSES_BREAKPOINTS = 4;
