import { TokenBucket } from '../../../core/rate-limits/bucket.ts';
import type { ClassLimits, RateLimitTable } from '../../../core/rate-limits/presets.ts';

/** Requests counted per ramp window: the current one and the one before. */
interface RampWindow {
  start: number;
  count: number;
  previous: number;
}

/** The buckets of one (API key, model class): RPM, ITPM, OTPM, and the ramp counter. */
export class KeyState {
  readonly limits: ClassLimits;
  readonly rpm: TokenBucket;
  readonly itpm: TokenBucket;
  readonly otpm: TokenBucket;
  readonly #ramp: RampWindow;

  constructor(limits: ClassLimits, table: RateLimitTable, now: number) {
    this.limits = limits;
    // A short enforcement window means a smaller bucket, refilled at the same rate per minute.
    const share = table.windowSeconds / 60;
    const bucket = (perMinute: number): TokenBucket => new TokenBucket(perMinute, Math.max(1, perMinute * share), now);
    this.rpm = bucket(limits.rpm);
    this.itpm = bucket(limits.itpm);
    this.otpm = bucket(limits.otpm);
    this.#ramp = { start: now, count: 0, previous: 0 };
  }

  /**
   * Whether one more request fits the acceleration limit, and if not, ms until the window
   * turns. An idle key's allowance is `floor`; each window may grow to `factor` × the last.
   */
  rampWait(ramp: NonNullable<RateLimitTable['ramp']>, now: number): number {
    const w = this.#ramp;
    const length = ramp.windowSeconds * 1000;
    const elapsed = Math.floor((now - w.start) / length);
    if (elapsed >= 1) {
      w.previous = elapsed === 1 ? w.count : 0;
      w.count = 0;
      w.start += elapsed * length;
    }
    const allowed = Math.max(ramp.floor, Math.floor(ramp.factor * w.previous));
    return w.count < allowed ? 0 : w.start + length - now;
  }

  countRamp(): void {
    this.#ramp.count += 1;
  }
}
