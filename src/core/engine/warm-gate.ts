import pLimit, { type LimitFunction } from 'p-limit';
import { type Clock, systemClock } from '../util/clock.ts';
import { WarmEntry, type WarmState } from '../gate/warm-entry.ts';
import type { GatePermit, RequestGate } from '../loop/types.ts';
import type { Readability } from '../wire/providers.ts';
import type { WarmStrategy } from '../settings/engine-settings.ts';

interface WarmGateOptions {
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
  /**
   * When the warmer's writes become readable (default `response-start`, Anthropic's rule):
   * `response-end` holds siblings until the warmer's response completes (DashScope, DeepSeek,
   * OpenAI); `none` holds nothing (vLLM/SGLang share blocks within one batch).
   */
  readable?: Readability;
}

/**
 * The scheduler of one fan-out's requests. A cache entry becomes readable only once the
 * response that wrote it has begun, so with `first-child` the first request of the first
 * child goes alone (the *warmer*) and every sibling's first request waits for its
 * `message_start`. Later turns only wait for the API concurrency limit.
 *
 * TTL awareness: each first request that passes the warm entry refreshes it (a read
 * refreshes the lifetime from the request's start). A queue that waits longer than the
 * lifetime finds the entry expired, and the next first request warms it again instead of N
 * siblings missing together. The rule itself is `WarmEntry` (src/core/gate), shared with the proxy.
 */
export class WarmGate implements RequestGate {
  readonly #strategy: WarmStrategy;
  readonly #limit: LimitFunction;
  readonly #entry: WarmEntry;
  readonly #atEnd: boolean;

  constructor(options: WarmGateOptions) {
    this.#strategy = options.readable === 'none' ? 'none' : options.strategy;
    this.#atEnd = options.readable === 'response-end';
    this.#limit = options.limit;
    this.#entry = new WarmEntry({
      ttlMs: options.ttlMs,
      clock: options.clock ?? systemClock,
      ...(options.marginMs === undefined ? {} : { marginMs: options.marginMs }),
    });
  }

  /** How many requests warmed (or re-warmed) the shared prefix. */
  get warmups(): number {
    return this.#entry.warmups;
  }

  get state(): WarmState {
    return this.#entry.state;
  }

  /**
   * Mark the entry warm from outside (a `prewarm` request the engine sent itself, or a parent
   * whose own last request already wrote the prefix).
   */
  markWarm(at?: number): void {
    this.#entry.markWarm(at);
  }

  /** Resolves once the shared prefix has first become readable (at once with `none`). */
  whenWarm(): Promise<void> {
    return this.#strategy === 'none' ? Promise.resolve() : this.#entry.whenWarm();
  }

  /** Before a `prewarm` request: hold every first request until `markWarm`. */
  beginWarming(): void {
    this.#entry.beginWarming();
  }

  /** A warm-up that failed before its response began: the next first request warms instead. */
  warmingFailed(): void {
    this.#entry.warmingFailed();
  }

  async acquire(request: { turn: number; first: boolean; signal?: AbortSignal | undefined }): Promise<GatePermit> {
    const warmer = request.first && this.#strategy !== 'none' && (await this.#entry.admit(request.signal)) === 'warmer';
    return this.#slot(warmer, request.signal);
  }

  /** Hold a concurrency slot until the permit is released. */
  #slot(warmer: boolean, signal: AbortSignal | undefined): Promise<GatePermit> {
    return new Promise<GatePermit>((resolve, reject) => {
      void this.#limit(
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
                if (warmer && !this.#atEnd) this.markWarm();
              },
              release: (report) => {
                if (released) return;
                released = true;
                if (warmer && this.#atEnd && started && report?.status === 200) this.markWarm();
                else if (warmer && (!started || this.#atEnd)) this.warmingFailed();
                releaseSlot();
              },
            });
          }),
      );
    });
  }
}

/** A concurrency limiter for the API (a queue, never a rejection). */
export function apiLimiter(concurrency: number): LimitFunction {
  return pLimit(concurrency);
}
