import { CACHE_TTL_MS, RESPONSES_CACHE_TTL_MS, type ResponsesCacheTtl } from '../../../core/wire/cache.ts';
import type { CacheTtl } from '../types.ts';

/** An entry's lifetime name: the Messages API's two, or the Responses API's two. */
export type StoreTtl = CacheTtl | ResponsesCacheTtl;

/** Lifetimes of the TTLs the APIs offer. */
export const TTL_MS: Readonly<Record<StoreTtl, number>> = { ...CACHE_TTL_MS, ...RESPONSES_CACHE_TTL_MS };

/** A readable cache entry: the prefix up to a marker position, by its chained hash. */
export interface CacheEntry {
  readonly hash: string;
  readonly tokens: number;
  ttl: StoreTtl;
  /** When it stops being readable (ms, on the emulator's clock). */
  expiresAt: number;
  readonly createdAt: number;
  hits: number;
}

/**
 * The emulator's cache: only *committed* entries live here. A writer's entries are held by its
 * request until its response begins (`commit`), which is how "readable only once the writing
 * response has begun" is modelled: there is no pending state to leak.
 */
export class CacheStore {
  readonly #entries = new Map<string, CacheEntry>();
  #expired = 0;
  #commits = 0;

  /** The live entry for `hash`, or undefined (an expired entry is dropped on sight). */
  get(hash: string, now: number): CacheEntry | undefined {
    const entry = this.#entries.get(hash);
    if (!entry) return undefined;
    if (entry.expiresAt <= now) {
      this.#entries.delete(hash);
      this.#expired++;
      return undefined;
    }
    return entry;
  }

  /** A hit refreshes the lifetime, from the start of the reading request, at no cost. */
  refresh(hash: string, requestStart: number, now: number): void {
    const entry = this.get(hash, now);
    if (!entry) return;
    entry.hits++;
    entry.expiresAt = Math.max(entry.expiresAt, requestStart + TTL_MS[entry.ttl]);
  }

  /**
   * Make an entry readable. Its lifetime runs from the start of the writing request. If a
   * concurrent writer committed the same prefix first, the longer lifetime wins.
   */
  commit(hash: string, tokens: number, ttl: StoreTtl, requestStart: number, now: number): void {
    const expiresAt = requestStart + TTL_MS[ttl];
    const existing = this.get(hash, now);
    if (existing) {
      existing.expiresAt = Math.max(existing.expiresAt, expiresAt);
      if (TTL_MS[ttl] > TTL_MS[existing.ttl]) existing.ttl = ttl;
      return;
    }
    if (expiresAt <= now) return;
    this.#entries.set(hash, { hash, tokens, ttl, expiresAt, createdAt: now, hits: 0 });
    // A long-running emulator sees many one-off prefixes: sweep expired ones now and then.
    if (++this.#commits % 1024 === 0) this.size(now);
  }

  /** Live entries (expired ones are pruned first). */
  size(now: number): number {
    for (const [hash, entry] of this.#entries) {
      if (entry.expiresAt <= now) {
        this.#entries.delete(hash);
        this.#expired++;
      }
    }
    return this.#entries.size;
  }

  /** Entries that expired so far (seen on a lookup or a prune). */
  get expiredCount(): number {
    return this.#expired;
  }

  /** A read-only copy of the live entries, for tests and debugging. */
  entries(now: number): CacheEntry[] {
    this.size(now);
    return [...this.#entries.values()].map((e) => ({ ...e }));
  }

  clear(): void {
    this.#entries.clear();
  }
}
