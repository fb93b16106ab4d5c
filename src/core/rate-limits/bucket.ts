/**
 * A token bucket, continuously refilled: `capacity` at most, `perMinute` added every minute in
 * proportion to the time passed. The API's limits are buckets of this kind (not fixed
 * windows), so the emulator enforces and the scheduler predicts with the same arithmetic.
 */
export class TokenBucket {
  readonly capacity: number;
  readonly perMinute: number;
  #level: number;
  #at: number;

  constructor(perMinute: number, capacity: number, now: number, level = capacity) {
    this.perMinute = perMinute;
    this.capacity = capacity;
    this.#level = level;
    this.#at = now;
  }

  /** Tokens available at `now` (may be negative after output overshot the budget). */
  level(now: number): number {
    if (now > this.#at) {
      this.#level = Math.min(this.capacity, this.#level + ((now - this.#at) * this.perMinute) / 60_000);
      this.#at = now;
    }
    return this.#level;
  }

  /** Spend `n` (refunds are negative `n`); the level may go below zero. */
  take(n: number, now: number): void {
    this.#level = Math.min(this.capacity, this.level(now) - n);
  }

  /** Set the level (learning from the API's `remaining`). */
  set(level: number, now: number): void {
    this.level(now);
    this.#level = Math.min(this.capacity, level);
  }

  /** Milliseconds until `n` tokens are available (0 when they are; Infinity when n > capacity). */
  msUntil(n: number, now: number): number {
    const missing = n - this.level(now);
    if (missing <= 0) return 0;
    if (n > this.capacity || this.perMinute <= 0) return Infinity;
    return Math.ceil((missing * 60_000) / this.perMinute);
  }
}
