import { describe, expect, it } from 'vitest';
import { SlotPool } from '../../src/engine/slot-pool.ts';
import { OPEN_GATE } from '../../src/loop/types.ts';

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('SlotPool', () => {
  it('one fork per slot at a time, the lowest free slot first, the rest wait in order', async () => {
    const pool = new SlotPool(2, { clean: [0, 1] });
    expect(await pool.acquire()).toBe(0);
    expect(await pool.acquire()).toBe(1);
    const order: number[] = [];
    const third = pool.acquire().then((s) => order.push(s));
    const fourth = pool.acquire().then((s) => order.push(s));
    await tick();
    expect(order).toEqual([]);
    pool.release(1);
    await third;
    pool.release(0);
    await fourth;
    expect(order).toEqual([1, 0]);
  });

  it('a cancelled wait leaves the queue', async () => {
    const pool = new SlotPool(1, { clean: [0] });
    await pool.acquire();
    const abort = new AbortController();
    const waiting = pool.acquire(abort.signal);
    abort.abort(new Error('cancelled'));
    await expect(waiting).rejects.toThrow('cancelled');
    pool.release(0);
    expect(await pool.acquire()).toBe(0);
  });

  it('on a server that clears idle slots: the prefix is restored before a request, and nothing starts in between', async () => {
    const restored: number[] = [];
    const pool = new SlotPool(3, { clean: [0], restore: async (slot) => void restored.push(slot) });
    const a = await pool.gate(0, OPEN_GATE).acquire({ turn: 1, first: true });
    expect(restored).toEqual([]); // slot 0 holds the prefix (the warm-up ran there)
    let bStarted = false;
    const b = pool
      .gate(1, OPEN_GATE)
      .acquire({ turn: 1, first: true })
      .then((permit) => ((bStarted = true), permit));
    await tick();
    // a's request has not begun at the server: b may not start (it would clear slot 0)
    expect(bStarted).toBe(false);
    a.started();
    const permitB = await b;
    expect(restored).toEqual([1]);
    permitB.started();
    a.release();
    permitB.release();
    // slot 0 was in flight when b started, but b started before a's response ended: the server may
    // have gone idle on slot 0 first, so slot 0 is restored too (unsure means restore)
    const c = await pool.gate(0, OPEN_GATE).acquire({ turn: 2, first: false });
    expect(restored).toEqual([1, 0]);
    c.started();
    c.release();
    const d = await pool.gate(1, OPEN_GATE).acquire({ turn: 2, first: false });
    expect(restored).toEqual([1, 0, 1]); // c's start cleared the idle slot 1
    d.started();
    d.release();
    // nothing started after d did: slot 1 kept its prompt
    const e = await pool.gate(1, OPEN_GATE).acquire({ turn: 3, first: false });
    expect(restored).toEqual([1, 0, 1]);
    e.release();
    expect(pool.restores).toBe(3);
  });

  it('a server that keeps idle slots needs no restore and no lock', async () => {
    const pool = new SlotPool(2, { clean: [0, 1] });
    const gate = pool.gate(1, OPEN_GATE);
    expect(gate).toBe(OPEN_GATE);
  });
});
