import { describe, expect, it } from 'vitest';
import { SpendCap } from '../../../src/core/gate/admission/spend-cap.ts';

// Amounts in nano-dollars: a cap of $1 is 1e9.
const settled = async (p: Promise<unknown>): Promise<'granted' | 'refused' | 'waiting'> => {
  let state: 'granted' | 'refused' | 'waiting' = 'waiting';
  p.then(
    () => (state = 'granted'),
    () => (state = 'refused'),
  );
  await new Promise((resolve) => setImmediate(resolve));
  return state;
};

describe('SpendCap: spent + in flight at their bounds never passes the cap', () => {
  it('admits while the bounds fit, holds the next until one settles, then admits it', async () => {
    const cap = new SpendCap(1);
    const a = await cap.reserve(400_000_000);
    const b = await cap.reserve(400_000_000);
    const c = cap.reserve(400_000_000);
    expect(await settled(c)).toBe('waiting'); // 0.8 held + 0.4 > 1
    a.started();
    a.settle(100_000_000); // cost 0.1 of its 0.4: room again
    expect(await settled(c)).toBe('granted');
    expect(cap.view()).toMatchObject({ maxUsd: 1, spentUsd: 0.1, reservedUsd: 0.8, stopped: false });
    b.settle(100_000_000);
    b.settle(999_000_000); // idempotent
    expect(cap.view().spentUsd).toBe(0.2);
  });

  it('refuses a bound that does not fit with nothing in flight (it never will), and still admits one that fits', async () => {
    const cap = new SpendCap(1);
    const a = await cap.reserve(500_000_000);
    const waiting = cap.reserve(600_000_000);
    a.started();
    a.settle(450_000_000);
    await expect(waiting).rejects.toMatchObject({
      code: 'SPEND_CAP_MAX_USD',
      message: expect.stringMatching(
        /spend cap of \$1 was reached: \$0\.4500 spent, and the next turn could cost up to \$0\.6000/,
      ),
    });
    expect(cap.view().stopped).toBe(true);
    // spending only grows: the same bound is refused at once, and a smaller turn behind it still runs
    await expect(cap.reserve(600_000_000)).rejects.toMatchObject({ code: 'SPEND_CAP_MAX_USD' });
    const small = await cap.reserve(500_000_000);
    small.settle(500_000_000);
    expect(cap.view()).toMatchObject({ spentUsd: 0.95, reservedUsd: 0 });
    await expect(cap.reserve(100_000_000)).rejects.toMatchObject({ code: 'SPEND_CAP_MAX_USD' });
  });

  it('a request that failed after its response began counts at its bound; one that never began, at nothing', async () => {
    const cap = new SpendCap(1);
    const began = await cap.reserve(300_000_000);
    began.started();
    began.settle(undefined);
    const never = await cap.reserve(300_000_000);
    never.settle(undefined);
    expect(cap.view()).toMatchObject({ spentUsd: 0.3, reservedUsd: 0 });
  });

  it("earlier sessions count (the cap is the whole run's); a waiter whose signal aborts leaves the queue", async () => {
    const cap = new SpendCap(1);
    cap.addSpent(700_000_000);
    await expect(cap.reserve(400_000_000)).rejects.toMatchObject({ code: 'SPEND_CAP_MAX_USD' });
    const fresh = new SpendCap(1);
    const held = await fresh.reserve(900_000_000);
    const abort = new AbortController();
    const first = fresh.reserve(500_000_000, abort.signal);
    const second = fresh.reserve(200_000_000);
    abort.abort(new Error('cancelled'));
    await expect(first).rejects.toThrow('cancelled');
    expect(await settled(second)).toBe('waiting'); // 0.9 + 0.2 fits only once held settles below its bound
    held.settle(200_000_000);
    expect(await settled(second)).toBe('granted');
  });

  it('maxRoomNano: the cap less what was spent, whatever is in flight; onSpend says each time spending grew', async () => {
    const cap = new SpendCap(1);
    let told = 0;
    const off = cap.onSpend(() => told++);
    cap.addSpent(100_000_000);
    const held = await cap.reserve(500_000_000);
    // in flight, it may still settle at nothing: the most room there can be is what was not spent
    expect(cap.maxRoomNano()).toBe(900_000_000);
    expect(told).toBe(1);
    held.started();
    held.settle(200_000_000);
    expect([cap.maxRoomNano(), told]).toEqual([700_000_000, 2]);
    (await cap.reserve(100_000_000)).settle(undefined); // never began: nothing spent, nothing said
    expect([cap.maxRoomNano(), told]).toEqual([700_000_000, 2]);
    off();
    cap.addSpent(100_000_000);
    expect([cap.maxRoomNano(), told]).toEqual([600_000_000, 2]);
    expect(cap.refusal(650_000_000)).toMatchObject({ code: 'SPEND_CAP_MAX_USD', data: { nextBoundUsd: 0.65 } });
  });
});
