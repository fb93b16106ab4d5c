import { describe, expect, it } from 'vitest';
import { ManualClock, systemClock } from '../../../src/core/util/clock.ts';

describe('ManualClock', () => {
  it('wakes sleepers only when time passes their deadline, in order', async () => {
    const clock = new ManualClock(1000);
    const woke: string[] = [];
    const a = clock.sleep(50).then(() => woke.push('a'));
    const b = clock.sleep(10).then(() => woke.push('b'));
    expect(clock.pending).toBe(2);
    clock.advance(9);
    await Promise.resolve();
    expect(woke).toEqual([]);
    clock.advance(41);
    await Promise.all([a, b]);
    expect(woke).toEqual(['b', 'a']);
    expect(clock.now()).toBe(1050);
    expect(clock.pending).toBe(0);
  });

  it('rejects an aborted sleep and forgets it', async () => {
    const clock = new ManualClock();
    const ctl = new AbortController();
    const p = clock.sleep(100, ctl.signal);
    ctl.abort(new Error('stop'));
    await expect(p).rejects.toThrow('stop');
    expect(clock.pending).toBe(0);
    await expect(systemClock.sleep(5, AbortSignal.abort(new Error('pre')))).rejects.toThrow('pre');
  });
});
