import { LOOKBACK_POSITIONS } from '../../emulator/cache/plan.ts';
import { TTL_MS } from '../../emulator/cache/store.ts';
import { lookbackWalk, type RequestShape } from './shape.ts';

/** A cache entry some request wrote at one of its markers, as the proxy saw it go by. */
export interface ShadowEntry {
  hash: string;
  writer: number;
  /** Position index in the writer's prompt. */
  position: number;
  ttlMs: number;
  /** When the writer's response began (the entry became readable); undefined while pending. */
  readableAt: number | undefined;
  expiresAt: number;
  /** The writer's Claude Code billing block, if any (to tell a volatile one). */
  billing: string | undefined;
}

export interface Lookback {
  /** The entry the cache rules say this request reads (longest reachable, readable). */
  read: { index: number; entry: ShadowEntry } | undefined;
  /** A longer entry within reach that was not readable: pending or expired. */
  blocked: { index: number; entry: ShadowEntry; why: 'pending' | 'expired' } | undefined;
  /** A longer readable entry on the prompt that no marker's lookback reaches. */
  tooFar: { index: number; entry: ShadowEntry; distance: number } | undefined;
}

/** Bounds: older hashes are forgotten first, so memory stays flat on a long-running proxy. */
const SEEN_LIMIT = 200_000;
const ENTRY_LIMIT = 50_000;

function remember<V>(map: Map<string, V>, key: string, value: V, limit: number): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > limit) map.delete(map.keys().next().value!);
}

/**
 * The proxy's model of the upstream's prompt cache, built from the requests that went through:
 * every block position seen (for "which block first differs"), and the entries written at
 * markers with the time the writer's response began ("readable once the writer's response has
 * begun"). Reads follow the API's lookback (20 positions per marker, runs of tool_use or
 * tool_result count as one). Hash-only: token counts are estimated elsewhere.
 */
export class PrefixIndex {
  readonly #seen = new Map<string, { seq: number; index: number }>();
  readonly #entries = new Map<string, ShadowEntry>();
  readonly #pendingBy = new Map<number, ShadowEntry[]>();
  readonly #lookback: number;

  constructor(options: { lookback?: number } = {}) {
    this.#lookback = options.lookback ?? LOOKBACK_POSITIONS;
  }

  /** The longest prefix (last position index) shared with an earlier request, and whose it was. */
  longestShared(shape: RequestShape): { index: number; seq: number } | undefined {
    for (let i = shape.positions.length - 1; i >= 0; i--) {
      const seen = this.#seen.get(shape.positions[i]!.hash);
      if (seen) return { index: i, seq: seen.seq };
    }
    return undefined;
  }

  /** What this request can read at `at`, by the lookback rule, and what stood in its way. */
  lookback(shape: RequestShape, at: number): Lookback {
    const { positions, markers } = shape;
    let read: Lookback['read'];
    let blocked: Lookback['blocked'];
    const reachable = new Set<number>();
    for (const i of lookbackWalk(shape, this.#lookback)) {
      reachable.add(i);
      const entry = this.#entries.get(positions[i]!.hash);
      if (!entry) continue;
      if (entry.readableAt !== undefined && entry.readableAt <= at && entry.expiresAt > at) {
        read = { index: i, entry };
        break;
      }
      const why = entry.readableAt !== undefined && entry.readableAt <= at ? 'expired' : 'pending';
      if (!blocked || i > blocked.index) blocked = { index: i, entry, why };
    }
    let tooFar: Lookback['tooFar'];
    for (let i = positions.length - 1; i > (read?.index ?? -1); i--) {
      if (reachable.has(i)) continue;
      const entry = this.#entries.get(positions[i]!.hash);
      if (entry && entry.readableAt !== undefined && entry.readableAt <= at && entry.expiresAt > at) {
        const nextMarker = markers.find((m) => m.position >= i);
        const distance =
          nextMarker === undefined
            ? Number.POSITIVE_INFINITY
            : positions[nextMarker.position]!.unit - positions[i]!.unit + 1;
        tooFar = { index: i, entry, distance };
        break;
      }
    }
    if (blocked && read && blocked.index < read.index) blocked = undefined;
    return { read, blocked, tooFar };
  }

  /**
   * Record a request as sent at `at`: its positions become "seen", a read refreshes its entry,
   * and each marker without a live entry becomes a pending write of this request.
   */
  sent(seq: number, shape: RequestShape, at: number, read: Lookback['read']): void {
    shape.positions.forEach((p, index) => {
      if (!this.#seen.has(p.hash)) remember(this.#seen, p.hash, { seq, index }, SEEN_LIMIT);
    });
    if (read) read.entry.expiresAt = Math.max(read.entry.expiresAt, at + read.entry.ttlMs);
    const pending: ShadowEntry[] = [];
    for (const marker of shape.markers) {
      if (marker.position <= (read?.index ?? -1)) continue;
      const p = shape.positions[marker.position]!;
      const existing = this.#entries.get(p.hash);
      if (existing && (existing.readableAt === undefined || existing.expiresAt > at)) continue;
      const ttlMs = TTL_MS[marker.ttl];
      const entry: ShadowEntry = {
        hash: p.hash,
        writer: seq,
        position: marker.position,
        ttlMs,
        readableAt: undefined,
        expiresAt: at + ttlMs,
        billing: shape.billing?.text,
      };
      remember(this.#entries, p.hash, entry, ENTRY_LIMIT);
      pending.push(entry);
    }
    if (pending.length > 0) this.#pendingBy.set(seq, pending);
  }

  /** The writer's response began: its entries are readable from `at`. */
  began(seq: number, at: number): void {
    for (const entry of this.#pendingBy.get(seq) ?? []) entry.readableAt = at;
    this.#pendingBy.delete(seq);
  }

  /** The writer failed before its response began: it wrote nothing. */
  failed(seq: number): void {
    for (const entry of this.#pendingBy.get(seq) ?? []) {
      if (this.#entries.get(entry.hash) === entry) this.#entries.delete(entry.hash);
    }
    this.#pendingBy.delete(seq);
  }
}
