import { type Clock, systemClock } from '../util/clock.ts';

export type WarmState = 'cold' | 'warming' | 'warm';

/** What a caller of `admit` must do: write the entry itself, or go ahead and read it. */
type Admission = 'warmer' | 'warm';

interface WarmEntryOptions {
  /** Lifetime of the cache entry (5 min or 1 h). */
  ttlMs: number;
  /**
   * Treat the entry as cold this long before it would expire: a request admitted just before
   * expiry may reach the API after it (default 10% of the TTL).
   */
  marginMs?: number;
  clock?: Clock;
}

/**
 * The warm-first rule for one cache entry, shared by the engine's gate and the proxy: an entry
 * becomes readable only once the response that wrote it has begun, so the first caller warms
 * it (`warmer`) and every other caller waits for that response's start (`markWarm`). A warmer
 * that fails before its response began hands the job to the next waiter (`warmingFailed`).
 * A warm entry that is not touched for its lifetime is cold again: the next caller re-warms it
 * instead of many missing together. Each admission while warm counts as a touch (a read
 * refreshes the lifetime from the request's start).
 */
export class WarmEntry {
  readonly #ttlMs: number;
  readonly #marginMs: number;
  readonly #clock: Clock;
  #state: WarmState = 'cold';
  #lastTouch = Number.NEGATIVE_INFINITY;
  #waiting: (() => void)[] = [];
  #warmups = 0;
  #warmedOnce!: () => void;
  /** Resolves the first time the entry is readable (see `whenWarm`). */
  readonly #firstWarm = new Promise<void>((resolve) => (this.#warmedOnce = resolve));

  constructor(options: WarmEntryOptions) {
    this.#ttlMs = options.ttlMs;
    this.#marginMs = options.marginMs ?? options.ttlMs / 10;
    this.#clock = options.clock ?? systemClock;
  }

  /** How many callers warmed (or re-warmed) the entry. */
  get warmups(): number {
    return this.#warmups;
  }

  get state(): WarmState {
    return this.#expired() ? 'cold' : this.#state;
  }

  /** Callers parked in `admit`. */
  get waiting(): number {
    return this.#waiting.length;
  }

  #expired(): boolean {
    return this.#state === 'warm' && this.#clock.now() - this.#lastTouch >= this.#ttlMs - this.#marginMs;
  }

  /** The entry is readable (a warmer's response began, or it was warmed from outside). */
  markWarm(at = this.#clock.now()): void {
    this.#warmedOnce();
    this.#state = 'warm';
    this.#lastTouch = at;
    this.#wakeAll();
  }

  /** Resolves once the entry has first become readable. */
  whenWarm(): Promise<void> {
    return this.#firstWarm;
  }

  /** Someone outside `admit` is warming it (a pre-warm request): hold every caller. */
  beginWarming(): void {
    this.#state = 'warming';
    this.#warmups += 1;
  }

  /** A warm-up that failed before its response began: the next waiter warms instead. */
  warmingFailed(): void {
    if (this.#state === 'warming') {
      this.#state = 'cold';
      this.#wakeOne();
    }
  }

  /** Without waiting: `warmer` (claimed), `warm`, or null while another caller is warming. */
  tryAdmit(): Admission | null {
    if (this.#expired()) this.#state = 'cold';
    if (this.#state === 'warm') {
      this.#lastTouch = this.#clock.now();
      return 'warm';
    }
    if (this.#state === 'cold') {
      this.#state = 'warming';
      this.#warmups += 1;
      return 'warmer';
    }
    return null;
  }

  /** Wait until the entry is warm, or until this caller is the one to warm it. */
  async admit(signal?: AbortSignal): Promise<Admission> {
    for (;;) {
      signal?.throwIfAborted();
      const admission = this.tryAdmit();
      if (admission) return admission;
      await this.#wait(signal);
    }
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

/**
 * `admit`, bounded: after `maxWaitMs` on the clock the caller is let go (`timeout`) and sends
 * anyway: a writer whose response never begins must not hold its siblings forever.
 */
export async function admitWithin(
  entry: WarmEntry,
  maxWaitMs: number,
  clock: Clock,
  signal?: AbortSignal,
): Promise<Admission | 'timeout'> {
  const stop = new AbortController();
  const onAbort = (): void => stop.abort(signal!.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  const timeout = clock.sleep(maxWaitMs, stop.signal).then(
    () => 'timeout' as const,
    () => 'timeout' as const,
  );
  try {
    const admitted = entry.admit(stop.signal);
    admitted.catch(() => undefined);
    const result = await Promise.race([admitted, timeout]);
    signal?.throwIfAborted();
    if (result !== 'timeout') return result;
    // The wait may have been admitted in the same tick as the timeout: a claimed `warmer` must
    // not be dropped, or the entry would stay `warming` with nobody writing it.
    stop.abort();
    return (await admitted.catch(() => null)) ?? 'timeout';
  } finally {
    signal?.removeEventListener('abort', onAbort);
    stop.abort();
  }
}
