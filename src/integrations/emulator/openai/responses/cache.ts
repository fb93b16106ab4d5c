import { MAX_RESPONSES_BREAKPOINTS, type ResponsesCacheTtl } from '../../../../core/wire/cache.ts';
import type { Position, RenderedPrefix } from '../../cache/render.ts';
import type { CacheStore } from '../../cache/store.ts';
import { type ChatCachePlan, refreshHit } from '../cache.ts';
import { reportedHit, type CacheRule } from '../rules.ts';

/** How far back explicit breakpoints are matched (OpenAI: "up to the latest 80 breakpoints"). */
const BREAKPOINT_MATCH_WINDOW = 80;

/** One Responses request's cache plan: the Chat plan's figures, the mode and the lifetime of its writes. */
export interface ResponsesCachePlan extends ChatCachePlan {
  mode: 'implicit' | 'explicit';
  ttl: ResponsesCacheTtl;
}

/**
 * `implicit` (the default): automatic prefix caching as in the Chat mode (the longest prefix an
 * earlier completed request wrote, reported in 128-token steps, or exactly when it ends at one
 * of the request's explicit breakpoints), and every prefix of this
 * prompt from the minimum on is written. Unlike Chat, the written part is reported: the
 * tokens past the hit, up to the end of the prompt (`cache_write_tokens`).
 */
function planImplicit(prefix: RenderedPrefix, store: CacheStore, rule: CacheRule, now: number) {
  let read: Position | undefined;
  for (let i = prefix.positions.length - 1; i >= 0 && !read; i--) {
    const p = prefix.positions[i]!;
    if (p.cumTokens < rule.minTokens) break;
    if (store.get(p.hash, now)) read = p;
  }
  const writes = prefix.positions
    .filter((p) => p.cumTokens >= rule.minTokens && p.index > (read?.index ?? -1))
    .map((p) => ({ hash: p.hash, tokens: p.cumTokens }));
  // a hit that ends at an explicit breakpoint is exact: "the boundary is not rounded to a token block"
  const cachedTokens = read?.cacheControl ? read.cumTokens : reportedHit(read?.cumTokens ?? 0, rule);
  const last = writes.at(-1)?.tokens ?? 0;
  return {
    cachedTokens,
    creationTokens: last > 0 ? last - cachedTokens : 0,
    readHash: read?.hash,
    writes,
    markers: prefix.positions.filter((p) => p.cacheControl).length,
  };
}

/**
 * `explicit`: no implicit breakpoint. Reads match exactly at one of the request's breakpoints
 * (the latest 80), not rounded to a step; the latest four breakpoints past the hit are written
 * (earlier ones are not: no error, as documented). No breakpoint: no caching at all.
 */
function planExplicit(prefix: RenderedPrefix, store: CacheStore, rule: CacheRule, now: number) {
  const marked = prefix.positions.filter((p) => p.cacheControl);
  const window = marked.slice(-BREAKPOINT_MATCH_WINDOW);
  let read: Position | undefined;
  for (let i = window.length - 1; i >= 0 && !read; i--) {
    const p = window[i]!;
    if (p.cumTokens >= rule.minTokens && store.get(p.hash, now)) read = p;
  }
  const writes = marked
    .slice(-MAX_RESPONSES_BREAKPOINTS)
    .filter((p) => p.cumTokens >= rule.minTokens && p.index > (read?.index ?? -1))
    .map((p) => ({ hash: p.hash, tokens: p.cumTokens }));
  const cachedTokens = read?.cumTokens ?? 0;
  const last = writes.at(-1)?.tokens ?? 0;
  return {
    cachedTokens,
    creationTokens: last > 0 ? last - cachedTokens : 0,
    readHash: read?.hash,
    writes,
    markers: marked.length,
  };
}

export function planResponsesCache(
  prefix: RenderedPrefix,
  store: CacheStore,
  rule: CacheRule,
  now: number,
  options: { mode: 'implicit' | 'explicit'; ttl: ResponsesCacheTtl },
): ResponsesCachePlan {
  const plan =
    options.mode === 'explicit' ? planExplicit(prefix, store, rule, now) : planImplicit(prefix, store, rule, now);
  return { totalTokens: prefix.totalTokens, ...plan, ...options };
}

/**
 * A hit refreshes its entry from the reading request's start (an implicit hit refreshes every
 * shorter prefix too: the same cached computation), each at the lifetime it was written with.
 */
export function applyResponsesRead(
  prefix: RenderedPrefix,
  plan: ResponsesCachePlan,
  store: CacheStore,
  requestStart: number,
  now: number,
): void {
  refreshHit(prefix, plan.readHash, plan.mode === 'explicit', store, requestStart, now);
}

/** The response completed: its entries become readable, for at least the request's TTL. */
export function commitResponsesWrites(
  plan: ResponsesCachePlan,
  store: CacheStore,
  requestStart: number,
  now: number,
): void {
  for (const w of plan.writes) store.commit(w.hash, w.tokens, plan.ttl, requestStart, now);
}
