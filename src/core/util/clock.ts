import { ForkcacheError } from './errors.ts';

/**
 * Time as a seam: everything that waits or reads the time takes a Clock, so tests jump time
 * with a ManualClock instead of sleeping.
 */
export interface Clock {
  /** Milliseconds since an arbitrary epoch (Date.now() for the system clock). */
  now(): number;
  /** Resolve after `ms` (at once for ms <= 0); reject with the signal's reason on abort. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep(ms, signal) {
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    if (ms <= 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        clearTimeout(timer);
        reject(abortReason(signal!));
      };
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  },
};

interface Sleeper {
  at: number;
  resolve: () => void;
}

/** A clock that only moves when told to. Sleepers wake in time order as `advance` passes them. */
export class ManualClock implements Clock {
  #now: number;
  #sleepers: Sleeper[] = [];

  constructor(start = 0) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  /** How many sleepers are waiting (lets a test wait until the code under test is parked). */
  get pending(): number {
    return this.#sleepers.length;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    if (ms <= 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const sleeper: Sleeper = {
        at: this.#now + ms,
        resolve: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      const onAbort = (): void => {
        this.#sleepers = this.#sleepers.filter((s) => s !== sleeper);
        reject(abortReason(signal!));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#sleepers.push(sleeper);
    });
  }

  /** Move time forward, waking every sleeper whose deadline is passed, earliest first. */
  advance(ms: number): void {
    if (ms < 0)
      throw new ForkcacheError('INVALID_OPTION', 'ManualClock.advance: ms must be >= 0', { data: { field: 'ms' } });
    this.#now += ms;
    const due = this.#sleepers.filter((s) => s.at <= this.#now).sort((a, b) => a.at - b.at);
    this.#sleepers = this.#sleepers.filter((s) => s.at > this.#now);
    for (const s of due) s.resolve();
  }

  /** Jump to the earliest sleeper's deadline and wake it (and any due at the same time). False when none sleeps. */
  advanceToNext(): boolean {
    if (this.#sleepers.length === 0) return false;
    const next = Math.min(...this.#sleepers.map((s) => s.at));
    this.advance(Math.max(0, next - this.#now));
    return true;
  }

  /** Set the time (forward only). */
  set(now: number): void {
    this.advance(now - this.#now);
  }
}
