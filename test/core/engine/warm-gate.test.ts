import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/util/clock.ts';
import { WarmGate, apiLimiter } from '../../../src/core/engine/warm-gate.ts';
import type { GatePermit } from '../../../src/core/loop/types.ts';

const flush = async (): Promise<void> => {
  for (let i = 0; i < 10; i++) await Promise.resolve();
};

function track(p: Promise<GatePermit>) {
  const state: { permit?: GatePermit; error?: unknown } = {};
  p.then(
    (permit) => (state.permit = permit),
    (error: unknown) => (state.error = error),
  );
  return state;
}

describe('WarmGate', () => {
  it('first-child: siblings wait until the first response has begun', async () => {
    const gate = new WarmGate({
      strategy: 'first-child',
      limit: apiLimiter(10),
      ttlMs: 300_000,
      clock: new ManualClock(),
    });
    const first = track(gate.acquire({ turn: 1, first: true }));
    const siblings = [track(gate.acquire({ turn: 1, first: true })), track(gate.acquire({ turn: 1, first: true }))];
    await flush();
    expect(first.permit).toBeDefined();
    expect(siblings.every((s) => s.permit === undefined)).toBe(true);
    first.permit!.started();
    await flush();
    expect(siblings.every((s) => s.permit !== undefined)).toBe(true);
    expect(gate.warmups).toBe(1);
  });

  it('whenWarm resolves once the first response has begun (at once with none)', async () => {
    const gate = new WarmGate({
      strategy: 'first-child',
      limit: apiLimiter(10),
      ttlMs: 300_000,
      clock: new ManualClock(),
    });
    let warm = false;
    void gate.whenWarm().then(() => (warm = true));
    const first = track(gate.acquire({ turn: 1, first: true }));
    await flush();
    expect(warm).toBe(false);
    first.permit!.started();
    await flush();
    expect(warm).toBe(true);
    await new WarmGate({ strategy: 'none', limit: apiLimiter(1), ttlMs: 1, clock: new ManualClock() }).whenWarm();
  });

  it('later turns never wait for the barrier', async () => {
    const gate = new WarmGate({
      strategy: 'first-child',
      limit: apiLimiter(10),
      ttlMs: 300_000,
      clock: new ManualClock(),
    });
    track(gate.acquire({ turn: 1, first: true }));
    const later = track(gate.acquire({ turn: 2, first: false }));
    await flush();
    expect(later.permit).toBeDefined();
  });

  it('none: everything goes at once', async () => {
    const gate = new WarmGate({ strategy: 'none', limit: apiLimiter(10), ttlMs: 300_000, clock: new ManualClock() });
    const all = [
      track(gate.acquire({ turn: 1, first: true })),
      track(gate.acquire({ turn: 1, first: true })),
      track(gate.acquire({ turn: 1, first: true })),
    ];
    await flush();
    expect(all.every((s) => s.permit)).toBe(true);
    expect(gate.warmups).toBe(0);
  });

  it('a warmer that fails before its response begins hands the role to the next sibling', async () => {
    const gate = new WarmGate({
      strategy: 'first-child',
      limit: apiLimiter(10),
      ttlMs: 300_000,
      clock: new ManualClock(),
    });
    const first = track(gate.acquire({ turn: 1, first: true }));
    const second = track(gate.acquire({ turn: 1, first: true }));
    const third = track(gate.acquire({ turn: 1, first: true }));
    await flush();
    first.permit!.release(); // failed: no response
    await flush();
    expect(second.permit).toBeDefined();
    expect(third.permit).toBeUndefined();
    second.permit!.started();
    await flush();
    expect(third.permit).toBeDefined();
    expect(gate.warmups).toBe(2);
  });

  it('re-warms when the queue outlives the cache lifetime', async () => {
    const clock = new ManualClock();
    const gate = new WarmGate({
      strategy: 'first-child',
      limit: apiLimiter(10),
      ttlMs: 300_000,
      marginMs: 30_000,
      clock,
    });
    const first = track(gate.acquire({ turn: 1, first: true }));
    await flush();
    first.permit!.started();
    clock.advance(200_000);
    const within = track(gate.acquire({ turn: 1, first: true })); // refreshes the entry at t=200s
    await flush();
    expect(within.permit).toBeDefined();
    clock.advance(269_999); // 269.999 s after the last touch: still inside ttl - margin
    expect(gate.state).toBe('warm');
    clock.advance(1);
    expect(gate.state).toBe('cold');
    const rewarm = track(gate.acquire({ turn: 1, first: true }));
    const waiting = track(gate.acquire({ turn: 1, first: true }));
    await flush();
    expect(rewarm.permit).toBeDefined();
    expect(waiting.permit).toBeUndefined();
    expect(gate.warmups).toBe(2);
    rewarm.permit!.started();
    await flush();
    expect(waiting.permit).toBeDefined();
  });

  it('queues beyond the concurrency limit instead of rejecting, in order', async () => {
    const gate = new WarmGate({ strategy: 'none', limit: apiLimiter(2), ttlMs: 300_000, clock: new ManualClock() });
    const all = Array.from({ length: 5 }, () => track(gate.acquire({ turn: 3, first: false })));
    await flush();
    expect(all.map((s) => s.permit !== undefined)).toEqual([true, true, false, false, false]);
    all[0]!.permit!.release();
    all[0]!.permit!.release(); // idempotent
    await flush();
    expect(all.map((s) => s.permit !== undefined)).toEqual([true, true, true, false, false]);
  });

  it('a waiting request can be aborted without disturbing the others', async () => {
    const gate = new WarmGate({
      strategy: 'first-child',
      limit: apiLimiter(10),
      ttlMs: 300_000,
      clock: new ManualClock(),
    });
    const first = track(gate.acquire({ turn: 1, first: true }));
    const ctl = new AbortController();
    const aborted = track(gate.acquire({ turn: 1, first: true, signal: ctl.signal }));
    const other = track(gate.acquire({ turn: 1, first: true }));
    await flush();
    ctl.abort(new Error('cancelled'));
    await flush();
    expect((aborted.error as Error).message).toBe('cancelled');
    first.permit!.started();
    await flush();
    expect(other.permit).toBeDefined();
  });
});
