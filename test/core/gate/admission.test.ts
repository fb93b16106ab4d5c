import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/util/clock.ts';
import { AdmissionScheduler, type Reservation } from '../../../src/core/gate/admission/scheduler.ts';
import type { RateLimitHeaders } from '../../../src/core/rate-limits/headers.ts';

const headers = (
  rpm: [number, number],
  itpm: [number, number],
  otpm: [number, number] = [400_000, 400_000],
): RateLimitHeaders => ({
  requests: { limit: rpm[0], remaining: rpm[1], resetAt: undefined },
  'input-tokens': { limit: itpm[0], remaining: itpm[1], resetAt: undefined },
  'output-tokens': { limit: otpm[0], remaining: otpm[1], resetAt: undefined },
});

/** Let queued promise callbacks run (no timers: the clock only moves when told). */
const settle = async (): Promise<void> => {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
};

function track(p: Promise<Reservation>): { done: boolean; value?: Reservation; error?: unknown } {
  const state: { done: boolean; value?: Reservation; error?: unknown } = { done: false };
  p.then(
    (value) => Object.assign(state, { done: true, value }),
    (error: unknown) => Object.assign(state, { done: true, error }),
  );
  return state;
}

describe('admission scheduler', () => {
  it('admits freely until a response teaches the limits, then paces ITPM with a continuously refilled bucket', async () => {
    const clock = new ManualClock();
    const s = new AdmissionScheduler({ clock, mode: 'on' });
    const first = await s.reserve('opus-5', { itpm: 100_000, otpm: 100 });
    first.started({ status: 200, rateLimits: headers([1000, 999], [200_000, 100_000]) }); // 200K ITPM a minute, 100K left
    first.settle({
      status: 200,
      usage: { input_tokens: 0, cache_creation_input_tokens: 100_000, cache_read_input_tokens: 0, output_tokens: 100 },
    });
    const a = track(s.reserve('opus-5', { itpm: 60_000, otpm: 100 }));
    const b = track(s.reserve('opus-5', { itpm: 60_000, otpm: 100 })); // 20K short: 6 s at 200K a minute
    await settle();
    expect([a.done, b.done]).toEqual([true, false]);
    expect(s.view()).toMatchObject({
      classes: [{ modelClass: 'opus-5', queued: 1, limits: { rpm: 1000, itpm: 200_000 } }],
    });
    clock.advance(5_999);
    await settle();
    expect(b.done).toBe(false);
    clock.advance(1);
    await settle();
    expect(b.done).toBe(true);
  });

  it('holds every request of the class for one retry-after after a 429 (one backoff for the whole fan-out)', async () => {
    const clock = new ManualClock();
    const s = new AdmissionScheduler({ clock, mode: 'on', random: () => 0 }); // no jitter: the exact retry-after
    const r = await s.reserve('opus-5', { itpm: 10, otpm: 10 });
    r.settle({
      status: 429,
      retryAfterMs: 5_000,
      errorType: 'rate_limit_error',
      rateLimits: headers([1000, 900], [2_000_000, 1_000_000]),
    });
    const waiting = Array.from({ length: 20 }, () => track(s.reserve('opus-5', { itpm: 10, otpm: 10 })));
    await settle();
    expect(waiting.filter((w) => w.done)).toHaveLength(0);
    expect(clock.pending).toBe(1); // one timer for all of them, not one per request
    clock.advance(5_000);
    await settle();
    expect(waiting.filter((w) => w.done)).toHaveLength(20);
    expect(s.counters('opus-5')).toMatchObject({ http429: 1, backoffs: 1 });
    // the API said no where the buckets said yes: it enforces a shorter window, so burst half as much
    expect(s.view().classes[0]!.burstShare).toBe(0.5);
  });

  it('stops admitting at the spend cap, rejecting with a clear code; a new fan-out tries again', async () => {
    const clock = new ManualClock();
    const s = new AdmissionScheduler({ clock, mode: 'on' });
    const r = await s.reserve('opus-5', { itpm: 10, otpm: 10 });
    const r2 = await s.reserve('opus-5', { itpm: 10, otpm: 10 });
    r.settle({ status: 429, errorType: 'rate_limit_error', errorCode: 'enforced_spend_limit_reached' });
    await expect(s.reserve('opus-5', { itpm: 10, otpm: 10 })).rejects.toMatchObject({
      code: 'RATE_LIMIT_SPEND_CAP',
      message: expect.stringMatching(/spend limit was reached .*resume the run once the limit is lifted/),
    });
    expect(s.view().stopped).toEqual({ errorCode: 'enforced_spend_limit_reached', modelClass: 'opus-5' });
    r2.settle({ status: 200 }); // a running request finishes normally
    s.retryAfterStop();
    await s.reserve('opus-5', { itpm: 10, otpm: 10 });
  });

  it('after ramp_limit_exceeded, admits half of the burst per window, then 1.5 × the window before', async () => {
    const clock = new ManualClock();
    const s = new AdmissionScheduler({ clock, mode: 'on' });
    const burst = await Promise.all(Array.from({ length: 8 }, () => s.reserve('opus-5', { itpm: 1, otpm: 1 })));
    burst[7]!.settle({
      status: 429,
      retryAfterMs: 1_000,
      errorType: 'rate_limit_error',
      errorCode: 'ramp_limit_exceeded',
    });
    const next = Array.from({ length: 12 }, () => track(s.reserve('opus-5', { itpm: 1, otpm: 1 })));
    await settle();
    expect(next.filter((w) => w.done)).toHaveLength(0);
    clock.advance(10_000); // past the backoff and the burst's window
    await settle();
    expect(next.filter((w) => w.done)).toHaveLength(4); // half of the 8 sent
    expect(s.counters('opus-5').rampErrors).toBe(1);
    clock.advance(10_000);
    await settle();
    expect(next.filter((w) => w.done)).toHaveLength(10); // 1.5 × the 4 of the window before
  });

  it('off: never waits, only counts', async () => {
    const s = new AdmissionScheduler({ clock: new ManualClock(), mode: 'off' });
    const r = await s.reserve('opus-5', { itpm: 10, otpm: 10 });
    r.settle({ status: 429, retryAfterMs: 60_000 });
    await s.reserve('opus-5', { itpm: 10, otpm: 10 });
    expect(s.counters('opus-5').http429).toBe(1);
  });
});
