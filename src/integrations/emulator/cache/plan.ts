import type { CacheTtl } from '../types.ts';
import type { Marker } from './markers.ts';
import type { Position, RenderedPrefix } from './render.ts';
import type { CacheStore } from './store.ts';

/** The API looks back at most this many positions from each marker (the marker's own included). */
export const LOOKBACK_POSITIONS = 20;

export interface CacheWrite {
  position: number;
  hash: string;
  /** Prefix length of the entry (tokens up to and including the marker's block). */
  tokens: number;
  ttl: CacheTtl;
}

/** Input-side usage, exactly the API's four counters (plus the TTL split of creation). */
export interface InputUsage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  ephemeral_5m_input_tokens: number;
  ephemeral_1h_input_tokens: number;
}

export interface CachePlan {
  totalTokens: number;
  /** The longest hit (A in the mixed-TTL rule), if any. */
  read: { position: number; hash: string; tokens: number } | undefined;
  /** Entries this request writes, made readable only when its response begins. */
  writes: CacheWrite[];
  usage: InputUsage;
  /** At least one marker reaches the model's minimum cacheable length. */
  eligible: boolean;
}

export interface PlanOptions {
  now: number;
  minCacheableTokens: number;
  lookback?: number;
}

// From marker position `from`, walk back through at most `lookback` units (a run of tool_use or
// of tool_result blocks is one unit), returning the first position with a readable entry.
function lookBack(
  positions: readonly Position[],
  from: number,
  store: CacheStore,
  options: PlanOptions,
): Position | undefined {
  const limit = options.lookback ?? LOOKBACK_POSITIONS;
  let units = 0;
  let unit: number | undefined;
  for (let i = from; i >= 0; i--) {
    const p = positions[i]!;
    if (p.unit !== unit) {
      unit = p.unit;
      if (++units > limit) return undefined;
    }
    // Entries are never shorter than the minimum, so nothing further back can match.
    if (p.cumTokens < options.minCacheableTokens) return undefined;
    if (store.get(p.hash, options.now)) return p;
  }
  return undefined;
}

/**
 * Decide what a request reads and writes, and its usage, without changing the store.
 *
 * - Reads: from the last marker back, each marker looks back up to 20 positions; the first hit
 *   wins (A). Only entries that an earlier request wrote at a marker, and whose response has
 *   begun, are in the store.
 * - Writes: one entry at each marker after A whose prefix reaches the minimum cacheable length.
 *   Markers at or before A write nothing (nothing there is billed as a write).
 * - Usage (mixed-TTL rule): B = last 1h marker after A, C = last marker after A;
 *   1h writes = B − A, 5m writes = C − max(A, B), input = total − max(A, C).
 *   Below the minimum, both cache counters are 0 and everything is input.
 */
export function planCache(
  prefix: RenderedPrefix,
  markers: readonly Marker[],
  store: CacheStore,
  options: PlanOptions,
): CachePlan {
  const { positions, totalTokens } = prefix;
  const min = options.minCacheableTokens;
  let read: Position | undefined;
  for (let k = markers.length - 1; k >= 0 && !read; k--) {
    read = lookBack(positions, markers[k]!.position, store, options);
  }
  const a = read?.cumTokens ?? 0;
  const readIndex = read?.index ?? -1;
  const eligible = markers.some((m) => positions[m.position]!.cumTokens >= min);
  const after = markers.filter((m) => m.position > readIndex && positions[m.position]!.cumTokens >= min);
  const lastOf = (list: readonly Marker[]): number | undefined => {
    const m = list[list.length - 1];
    return m === undefined ? undefined : positions[m.position]!.cumTokens;
  };
  const c = lastOf(after);
  const b = lastOf(after.filter((m) => m.ttl === '1h'));
  const write1h = b === undefined ? 0 : b - a;
  const write5m = c === undefined ? 0 : c - Math.max(a, b ?? 0);
  return {
    totalTokens,
    read: read && { position: read.index, hash: read.hash, tokens: read.cumTokens },
    writes: after.map((m) => {
      const p = positions[m.position]!;
      return { position: p.index, hash: p.hash, tokens: p.cumTokens, ttl: m.ttl };
    }),
    usage: {
      input_tokens: totalTokens - Math.max(a, c ?? 0),
      cache_creation_input_tokens: write1h + write5m,
      cache_read_input_tokens: a,
      ephemeral_5m_input_tokens: write5m,
      ephemeral_1h_input_tokens: write1h,
    },
    eligible,
  };
}

/** Apply the read side at once: a hit refreshes its entry from the request's start. */
export function applyRead(store: CacheStore, plan: CachePlan, requestStart: number, now: number): void {
  if (plan.read) store.refresh(plan.read.hash, requestStart, now);
}

/** Apply the write side when the response begins (`message_start`): the entries become readable. */
export function commitWrites(store: CacheStore, plan: CachePlan, requestStart: number, now: number): void {
  for (const w of plan.writes) store.commit(w.hash, w.tokens, w.ttl, requestStart, now);
}
