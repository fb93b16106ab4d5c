import type { Clock } from '../../../core/util/clock.ts';
import { LOOKBACK_POSITIONS } from '../../emulator/cache/plan.ts';
import { TTL_MS } from '../../emulator/cache/store.ts';
import { admitWithin, WarmEntry } from '../../../core/gate/warm-entry.ts';
import { lookbackWalk, type RequestShape } from '../diagnosis/shape.ts';

/** How a request went through the gate. */
export interface Passage {
  outcome: 'warmer' | 'held' | 'timeout' | 'free';
  heldMs: number;
  /** Entries this request warms: mark them when its response begins (or fails). */
  claimed: WarmEntry[];
}

const ENTRY_LIMIT = 50_000;

/**
 * `--warm-first` for requests the proxy did not build: one `WarmEntry` (src/core/gate, the engine's
 * rule) per marker prefix. A request whose lookback reaches an entry that another in-flight
 * request is writing, and whose response has not begun, waits for that response to begin (at
 * most `maxWaitMs`), then goes and reads it; the first request of a prefix goes at once and warms
 * its markers. Nothing else changes: the bytes sent are the client's.
 */
export class ProxyWarmFirst {
  readonly #entries = new Map<string, WarmEntry>();
  readonly #clock: Clock;
  readonly #maxWaitMs: number;

  constructor(options: { clock: Clock; maxWaitMs: number }) {
    this.#clock = options.clock;
    this.#maxWaitMs = options.maxWaitMs;
  }

  /** Requests parked at the gate now. */
  get waiting(): number {
    let n = 0;
    for (const entry of this.#entries.values()) n += entry.waiting;
    return n;
  }

  // The longest entry this request's lookback reaches that is warm or being warmed, as the
  // API would look (from the last marker back, 20 positions per marker).
  #target(shape: RequestShape): WarmEntry | undefined {
    for (const i of lookbackWalk(shape, LOOKBACK_POSITIONS)) {
      const entry = this.#entries.get(shape.positions[i]!.hash);
      const state = entry?.state;
      if (state === 'warm') return undefined;
      if (state === 'warming') return entry;
    }
    return undefined;
  }

  async pass(shape: RequestShape, signal: AbortSignal): Promise<Passage> {
    const t0 = this.#clock.now();
    const target = this.#target(shape);
    let outcome: Passage['outcome'] = 'free';
    const claimed: WarmEntry[] = [];
    if (target) {
      const admitted = await admitWithin(target, this.#maxWaitMs, this.#clock, signal);
      outcome = admitted === 'warm' ? 'held' : admitted;
      if (admitted === 'warmer') claimed.push(target);
    }
    for (const marker of shape.markers) {
      const hash = shape.positions[marker.position]!.hash;
      let entry = this.#entries.get(hash);
      if (!entry) {
        entry = new WarmEntry({ ttlMs: TTL_MS[marker.ttl], clock: this.#clock });
        this.#entries.set(hash, entry);
        if (this.#entries.size > ENTRY_LIMIT) this.#evict();
      }
      if (entry !== target && entry.tryAdmit() === 'warmer') claimed.push(entry);
    }
    if (outcome === 'free' && claimed.length > 0) outcome = 'warmer';
    return { outcome, heldMs: this.#clock.now() - t0, claimed };
  }

  /** The request's response began: what it wrote is readable, its waiters go. */
  began(passage: Passage): void {
    for (const entry of passage.claimed) entry.markWarm();
  }

  /** It failed before its response began: the next waiter warms instead. */
  failed(passage: Passage): void {
    for (const entry of passage.claimed) entry.warmingFailed();
  }

  // Forget the oldest idle entries (never one somebody waits on or is warming).
  #evict(): void {
    for (const [hash, entry] of this.#entries) {
      if (this.#entries.size <= ENTRY_LIMIT * 0.9) break;
      if (entry.waiting === 0 && entry.state !== 'warming') this.#entries.delete(hash);
    }
  }
}
