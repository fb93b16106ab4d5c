import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/util/clock.ts';
import { childParams, complete, emulator, proxy, sdk, until, words } from './helpers.ts';

// TTFT of 100 ms on the emulator's manual clock: siblings sent together reach it before the
// first response has begun, exactly as on the API, and time moves only when the test says so.
const latency = { baseMs: 100, prefillMsPerToken: 0, cacheReadMsPerToken: 0, outputTokensPerSecond: Infinity };

async function fanOut(warmFirst: boolean) {
  const clock = new ManualClock(Date.now());
  const emu = await emulator({ clock, latency });
  let arrived = 0;
  emu.on('request-start', () => arrived++);
  const px = await proxy({ upstream: emu.url, warmFirst });
  const client = sdk(px.url);
  const shared = words(2000, `cold${String(warmFirst)}`);
  const all = Promise.all(
    [0, 1, 2, 3].map((i) => complete(client, childParams(shared, `directive ${i}`, i % 2 === 0))),
  );
  return { clock, emu, px, all, arrived: () => arrived };
}

describe('--warm-first', () => {
  it('without it, siblings sent together all miss the prefix none of them has written yet', async () => {
    const { clock, px, all, arrived } = await fanOut(false);
    await until(() => arrived() === 4 && clock.pending === 4, 'all four parked at the emulator');
    clock.advance(100);
    await all;
    const records = px.ledger.records();
    expect(records.map((r) => r.usage!.cache_read_input_tokens)).toEqual([0, 0, 0, 0]);
    expect(records.slice(1).map((r) => r.diagnosis?.reason)).toEqual([
      'sibling_not_readable',
      'sibling_not_readable',
      'sibling_not_readable',
    ]);
    expect(px.summary().fanouts[0]!.cache_efficiency).toBe(0);
  });

  it('with it, the first goes alone and the others are held until its response begins, then read', async () => {
    const { clock, px, all, arrived } = await fanOut(true);
    await until(() => arrived() === 1 && px.held === 3, 'the first sent, three held');
    expect(clock.pending).toBe(1);
    clock.advance(100); // the first response begins: the held three go
    await until(() => arrived() === 4 && clock.pending === 3, 'the held three reach the emulator');
    clock.advance(100);
    await all;
    const records = px.ledger.records().sort((a, b) => a.sentAt - b.sentAt || a.seq - b.seq);
    const [first, ...held] = records;
    expect(first!.warm).toBe('warmer');
    expect(first!.usage!.cache_read_input_tokens).toBe(0);
    expect(held.map((r) => r.warm)).toEqual(['held', 'held', 'held']);
    expect(held.every((r) => r.usage!.cache_read_input_tokens > 2000 && r.diagnosis?.reason === 'read')).toBe(true);
    const summary = px.summary();
    expect(summary.fanouts[0]!.cache_efficiency).toBe(1);
    expect(summary.requests.held).toBe(3);
    expect(summary.saved_by_proxy_usd.warm_first).toBeGreaterThan(0);
  });

  it('releases a held request after the bound when the writer never begins', async () => {
    const upstreamClock = new ManualClock(Date.now());
    const emu = await emulator({ clock: upstreamClock, latency });
    const proxyClock = new ManualClock(0);
    const px = await proxy({ upstream: emu.url, warmFirst: true, warmWaitMs: 5_000, clock: proxyClock });
    const client = sdk(px.url);
    const shared = words(2000, 'bounded');
    const all = Promise.all([0, 1].map((i) => client.messages.create(childParams(shared, `directive ${i}`, false))));
    await until(() => px.held === 1 && upstreamClock.pending === 1, 'one sent, one held');
    proxyClock.advance(4_999);
    await new Promise((resolve) => setImmediate(resolve));
    expect(px.held).toBe(1);
    proxyClock.advance(1);
    await until(() => upstreamClock.pending === 2, 'the held one released at the bound');
    upstreamClock.advance(100);
    await all;
    expect(
      px.ledger
        .records()
        .map((r) => r.warm)
        .sort(),
    ).toEqual(['timeout', 'warmer']);
  });
});
