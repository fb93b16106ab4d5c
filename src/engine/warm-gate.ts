import pLimit, { type LimitFunction } from 'p-limit';
import { type Clock, systemClock } from '../clock.ts';
import type { GatePermit, RequestGate } from '../loop/types.ts';

export type WarmStrategy = 'first-child' | 'prewarm' | 'none';
export const WARM_STRATEGIES: readonly WarmStrategy[] = ['first-child', 'prewarm', 'none'];

export interface WarmGateOptions {
  strategy: WarmStrategy;
  /** In-flight API requests at most (all forks of the engine share one limiter). */
  limit: LimitFunction;
  /** Lifetime of the shared-boundary cache entry (5 min or 1 h). */
  ttlMs: number;
  /**
   * Re-warm this long before the entry would expire: a request granted just before expiry may
   * reach the API after it (default 10% of the TTL).
   */
  marginMs?: number;
  clock?: Clock;
}

type WarmState = 'cold' | 'warming' | 'warm';

/**
 * The scheduler of one fan-out's requests. A cache entry becomes readable only once the
 * response that wrote it has begun, so with `first-child` the first request of the first
 * child goes alone (the *warmer*) and every sibling's first request waits for its
 * `message_start`. Later turns only wait for the API concurrency limit.
 *
 * TTL awareness: each first request that passes the warm entry refreshes it (a read
 * refreshes the lifetime from the request's start). A queue that waits longer than the
 * lifetime finds the entry expired, and the next first request warms it again instead of N
 * siblings missing together.
 */
export class WarmGate implements RequestGate {
  readonly #options: Required<Omit<WarmGateOptions, 'marginMs'>> & { marginMs: number };
  #state: WarmState = 'cold';
  #lastTouch = Number.NEGATIVE_INFINITY;
  #waiting: (() => void)[] = [];
  #warmups = 0;
  #warmedOnce!: () => void;
  /** Resolves the first time the shared entry is readable (see `whenWarm`). */
  readonly #firstWarm = new Promise<void>((resolve) => (this.#warmedOnce = resolve));

  constructor(options: WarmGateOptions) {
    this.#options = { clock: systemClock, marginMs: options.ttlMs / 10, ...options };
  }

  /** How many requests warmed (or re-warmed) the shared prefix. */
  get warmups(): number {
    return this.#warmups;
  }

  get state(): WarmState {
    return this.#expired() ? 'cold' : this.#state;
  }

  #expired(): boolean {
    return this.#state === 'warm' && this.#options.clock.now() - this.#lastTouch >= this.#options.ttlMs - this.#options.marginMs;
  }

  /**
   * Mark the entry warm from outside (a `prewarm` request the engine sent itself, or a parent
   * whose own last request already wrote the prefix).
   */
  markWarm(at = this.#options.clock.now()): void {
    this.#warmedOnce();
    this.#state = 'warm';
    this.#lastTouch = at;
    this.#wakeAll();
  }

  /** Resolves once the shared prefix has first become readable (at once with `none`). */
  whenWarm(): Promise<void> {
    return this.#options.strategy === 'none' ? Promise.resolve() : this.#firstWarm;
  }

  /** Before a `prewarm` request: hold every first request until `markWarm`. */
  beginWarming(): void {
    this.#state = 'warming';
    this.#warmups += 1;
  }

  /** A warm-up that failed before its response began: the next first request warms instead. */
  warmingFailed(): void {
    if (this.#state === 'warming') {
      this.#state = 'cold';
      this.#wakeOne();
    }
  }

  async acquire(request: { turn: number; first: boolean; signal?: AbortSignal | undefined }): Promise<GatePermit> {
    const first = request.first;
    let warmer = false;
    if (first && this.#options.strategy !== 'none') {
      for (;;) {
        request.signal?.throwIfAborted();
        if (this.#expired()) this.#state = 'cold';
        if (this.#state === 'warm') {
          this.#lastTouch = this.#options.clock.now();
          break;
        }
        if (this.#state === 'cold') {
          this.#state = 'warming';
          this.#warmups += 1;
          warmer = true;
          break;
        }
        await this.#wait(request.signal);
      }
    }
    return this.#slot(warmer, request.signal);
  }

  /** Hold a concurrency slot until the permit is released. */
  #slot(warmer: boolean, signal: AbortSignal | undefined): Promise<GatePermit> {
    return new Promise<GatePermit>((resolve, reject) => {
      void this.#options.limit(
        () =>
          new Promise<void>((releaseSlot) => {
            if (signal?.aborted) {
              releaseSlot();
              if (warmer) this.warmingFailed();
              reject(signal.reason);
              return;
            }
            let started = false;
            let released = false;
            resolve({
              started: () => {
                if (started) return;
                started = true;
                if (warmer) this.markWarm();
              },
              release: () => {
                if (released) return;
                released = true;
                if (warmer && !started) this.warmingFailed();
                releaseSlot();
              },
            });
          }),
      );
    });
  }

  #wait(signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const wake = (): void => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = (): void => {
        this.#waiting = this.#waiting.filter((w) => w !== wake);
        reject(signal!.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiting.push(wake);
    });
  }

  #wakeAll(): void {
    const waiting = this.#waiting;
    this.#waiting = [];
    for (const wake of waiting) wake();
  }

  #wakeOne(): void {
    this.#waiting.shift()?.();
  }
}

/** A concurrency limiter for the API (a queue, never a rejection). */
export function apiLimiter(concurrency: number): LimitFunction {
  return pLimit(concurrency);
}
