import { CACHE_TTL_MS } from '../../../core/wire/cache.ts';
import type { Marker } from '../cache/markers.ts';
import { planCache } from '../cache/plan.ts';
import type { Position, RenderedPrefix } from '../cache/render.ts';
import type { CacheStore } from '../cache/store.ts';
import type { CacheTtl } from '../types.ts';
import { OpenAiError } from './errors.ts';
import { DASHSCOPE_LOOKBACK_BLOCKS, DASHSCOPE_MAX_MARKERS, reportedHit, type CacheRule } from './rules.ts';

/** What one Chat request reads and writes, in the provider-neutral terms of the usage mappers. */
export interface ChatCachePlan {
  totalTokens: number;
  /** Prompt tokens served from the cache, as the provider reports them (steps applied). */
  cachedTokens: number;
  /** Prompt tokens written to the cache at a premium (DashScope explicit only; 0 elsewhere). */
  creationTokens: number;
  /** The entry read (its hash), refreshed at once. */
  readHash: string | undefined;
  /** Entries that become readable when the response completes. */
  writes: { hash: string; tokens: number }[];
  markers: number;
}

const ttlOf = (rule: CacheRule): CacheTtl => (rule.ttlMs > CACHE_TTL_MS['5m'] ? '1h' : '5m');

function where(p: Position): string {
  return p.segment === 'messages' ? `messages[${p.message}].content[${p.block}]` : `${p.segment}[${p.block}]`;
}

/**
 * Automatic prefix caching (OpenAI, DeepSeek): the longest prefix, in whole content parts, that
 * an earlier completed request already sent, reported in the provider's steps. Every prefix of
 * this prompt that reaches the minimum is written (free), readable once the response completes.
 */
function planAutomatic(prefix: RenderedPrefix, store: CacheStore, rule: CacheRule, now: number): ChatCachePlan {
  let read: Position | undefined;
  for (let i = prefix.positions.length - 1; i >= 0 && !read; i--) {
    const p = prefix.positions[i]!;
    if (p.cumTokens < rule.minTokens) break;
    if (store.get(p.hash, now)) read = p;
  }
  const writes = prefix.positions
    .filter((p) => p.cumTokens >= rule.minTokens && p.index > (read?.index ?? -1))
    .map((p) => ({ hash: p.hash, tokens: p.cumTokens }));
  return {
    totalTokens: prefix.totalTokens,
    cachedTokens: reportedHit(read?.cumTokens ?? 0, rule),
    creationTokens: 0,
    readHash: read?.hash,
    writes,
    markers: 0,
  };
}

/**
 * DashScope's explicit cache: markers on content parts (≤ 4, else 400), each looking back 20
 * blocks for an entry; the marked prefixes after the hit are created at 125%. The lookback and
 * the read/write split are the Messages API's rule, which DashScope's documentation mirrors
 * (one difference kept from it: a run of tool calls, or of tool results, counts as one block).
 */
function planExplicit(prefix: RenderedPrefix, store: CacheStore, rule: CacheRule, now: number): ChatCachePlan {
  const marked = prefix.positions.filter((p) => p.segment === 'messages' && p.cacheControl);
  if (marked.length > DASHSCOPE_MAX_MARKERS) {
    throw OpenAiError.invalid(
      `A maximum of ${DASHSCOPE_MAX_MARKERS} content parts with cache_control may be provided; found ${marked.length} (${marked.map(where).join(', ')}).`,
      where(marked[DASHSCOPE_MAX_MARKERS]!),
      'too_many_cache_markers',
    );
  }
  const markers: Marker[] = marked.map((p) => ({ position: p.index, ttl: ttlOf(rule), automatic: false }));
  const plan = planCache(prefix, markers, store, {
    now,
    minCacheableTokens: rule.minTokens,
    lookback: DASHSCOPE_LOOKBACK_BLOCKS,
  });
  return {
    totalTokens: prefix.totalTokens,
    cachedTokens: plan.usage.cache_read_input_tokens,
    creationTokens: plan.usage.cache_creation_input_tokens,
    readHash: plan.read?.hash,
    writes: plan.writes.map((w) => ({ hash: w.hash, tokens: w.tokens })),
    markers: markers.length,
  };
}

export function planChatCache(prefix: RenderedPrefix, store: CacheStore, rule: CacheRule, now: number): ChatCachePlan {
  return rule.mode === 'explicit' ? planExplicit(prefix, store, rule, now) : planAutomatic(prefix, store, rule, now);
}

/**
 * A hit refreshes its entry from the reading request's start; for automatic caching every
 * shorter prefix of the hit is the same cached computation, so it is refreshed too.
 */
export function applyChatRead(
  prefix: RenderedPrefix,
  plan: ChatCachePlan,
  store: CacheStore,
  rule: CacheRule,
  requestStart: number,
  now: number,
): void {
  refreshHit(prefix, plan.readHash, rule.mode === 'explicit', store, requestStart, now);
}

/**
 * Refresh a hit's entry from the reading request's start: an explicit breakpoint's alone; an
 * automatic hit's with every shorter prefix of it (the same cached computation). Chat
 * Completions and the Responses API read their caches the same way.
 */
export function refreshHit(
  prefix: RenderedPrefix,
  readHash: string | undefined,
  explicit: boolean,
  store: CacheStore,
  requestStart: number,
  now: number,
): void {
  if (!readHash) return;
  if (explicit) return store.refresh(readHash, requestStart, now);
  for (const p of prefix.positions) {
    store.refresh(p.hash, requestStart, now);
    if (p.hash === readHash) break;
  }
}

/** The response completed: its entries become readable (the providers' documented moment). */
export function commitChatWrites(
  plan: ChatCachePlan,
  store: CacheStore,
  rule: CacheRule,
  requestStart: number,
  now: number,
): void {
  for (const w of plan.writes) store.commit(w.hash, w.tokens, ttlOf(rule), requestStart, now);
}
