import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/util/clock.ts';
import { admitWithin, WarmEntry } from '../../../src/core/gate/warm-entry.ts';

const flush = async (): Promise<void> => {
  for (let i = 0; i < 10; i++) await Promise.resolve();
};

describe('WarmEntry (shared by the engine and the proxy)', () => {
  it('one warmer; the others wait for its response to begin', async () => {
    const entry = new WarmEntry({ ttlMs: 300_000, clock: new ManualClock() });
    expect(await entry.admit()).toBe('warmer');
    const waiting = [entry.admit(), entry.admit()];
    await flush();
    expect(entry.waiting).toBe(2);
    entry.markWarm();
    expect(await Promise.all(waiting)).toEqual(['warm', 'warm']);
  });

  it('a warmer that fails before its response began hands the job to the next waiter', async () => {
    const entry = new WarmEntry({ ttlMs: 300_000, clock: new ManualClock() });
    expect(entry.tryAdmit()).toBe('warmer');
    const next = entry.admit();
    const after = entry.admit();
    await flush();
    entry.warmingFailed();
    expect(await next).toBe('warmer');
    expect(entry.waiting).toBe(1);
    entry.markWarm();
    expect(await after).toBe('warm');
    expect(entry.warmups).toBe(2);
  });

  it('is cold again once untouched for its lifetime (less the margin)', () => {
    const clock = new ManualClock();
    const entry = new WarmEntry({ ttlMs: 1000, marginMs: 100, clock });
    entry.tryAdmit();
    entry.markWarm();
    clock.advance(899);
    expect(entry.state).toBe('warm');
    clock.advance(1);
    expect(entry.state).toBe('cold');
    expect(entry.tryAdmit()).toBe('warmer');
  });

  it('admitWithin lets a waiter go at the bound, and leaves the entry to its warmer', async () => {
    const clock = new ManualClock();
    const entry = new WarmEntry({ ttlMs: 300_000, clock });
    entry.tryAdmit();
    const bounded = admitWithin(entry, 500, clock);
    await flush();
    clock.advance(499);
    await flush();
    expect(entry.waiting).toBe(1);
    clock.advance(1);
    expect(await bounded).toBe('timeout');
    expect(entry.waiting).toBe(0);
    expect(entry.state).toBe('warming');
  });

  it('admitWithin rejects when its caller aborts, and stops waiting', async () => {
    const clock = new ManualClock();
    const entry = new WarmEntry({ ttlMs: 300_000, clock });
    entry.tryAdmit();
    const controller = new AbortController();
    const bounded = admitWithin(entry, 500, clock, controller.signal);
    await flush();
    controller.abort(new Error('client left'));
    await expect(bounded).rejects.toThrow('client left');
    expect(entry.waiting).toBe(0);
    expect(clock.pending).toBe(0);
  });
});
