import { describe, expect, it } from 'vitest';
import type { RequestBlock } from '../../../src/integrations/emulator/types.ts';
import { CacheStore } from '../../../src/integrations/emulator/cache/store.ts';
import { applyRead, commitWrites } from '../../../src/integrations/emulator/cache/plan.ts';
import { plan, request, run, text } from './cache-fixtures.ts';

const user = (...content: RequestBlock[]) => request({ messages: [{ role: 'user', content }] });
const B0 = text(12, 'base');
const marked = (block: RequestBlock, ttl: '5m' | '1h' = '5m'): RequestBlock => ({
  ...block,
  cache_control: ttl === '5m' ? { type: 'ephemeral' } : { type: 'ephemeral', ttl },
});
const fillers = (n: number): RequestBlock[] => Array.from({ length: n }, (_, i) => text(1, `f${i}`));

describe('cache plan: writes and reads', () => {
  it('writes only at markers, one entry per marker', () => {
    const store = new CacheStore();
    const req = user(text(5, 'a'), marked(text(10, 'b')), text(5, 'c'));
    const p = plan(req, store);
    expect(p.writes.map((w) => [w.position, w.tokens])).toEqual([[1, 15]]);
    run(req, store);
    expect(store.entries(0).map((e) => e.tokens)).toEqual([15]);
  });

  it('input_tokens counts only what follows the last marker; a repeat reads the prefix', () => {
    const store = new CacheStore();
    const req = user(text(5, 'a'), marked(text(15, 'b')), text(10, 'c'));
    expect(run(req, store)).toEqual({
      input_tokens: 10,
      cache_creation_input_tokens: 20,
      cache_read_input_tokens: 0,
      ephemeral_5m_input_tokens: 20,
      ephemeral_1h_input_tokens: 0,
    });
    expect(run(req, store)).toEqual({
      input_tokens: 10,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 20,
      ephemeral_5m_input_tokens: 0,
      ephemeral_1h_input_tokens: 0,
    });
  });

  it('with no marker, nothing is read or written', () => {
    const store = new CacheStore();
    run(user(marked(B0)), store);
    expect(run(user(B0, text(3, 'x')), store)).toMatchObject({
      input_tokens: 15,
      cache_read_input_tokens: 0,
      cache_creation_input_tokens: 0,
    });
  });

  it('looks back 20 positions from a marker (its own included), not 21', () => {
    const store = new CacheStore();
    run(user(marked(B0)), store);
    const reach = (n: number) => {
      const blocks: RequestBlock[] = [B0, ...fillers(n)];
      blocks[n] = marked(blocks[n]!);
      return plan(user(...blocks), store).usage.cache_read_input_tokens;
    };
    expect(reach(19)).toBe(12);
    expect(reach(20)).toBe(0);
  });

  it('counts a run of tool_use blocks, and one of tool_result blocks, as one position each', () => {
    const store = new CacheStore();
    run(user(marked(B0)), store);
    const ids = Array.from({ length: 25 }, (_, i) => `toolu_${i}`);
    const req = request({
      messages: [
        { role: 'user', content: [B0] },
        {
          role: 'assistant',
          content: ids.map((id) => ({ type: 'tool_use', id, name: 'read_file', input: { path: id } })),
        },
        {
          role: 'user',
          content: [
            ...ids.map((id) => ({ type: 'tool_result', tool_use_id: id, content: 'ok' })),
            marked(text(2, 'go')),
          ],
        },
      ],
    });
    expect(plan(req, store).usage.cache_read_input_tokens).toBe(12);
  });

  it('falls back to the previous marker when the last one cannot reach an entry', () => {
    const store = new CacheStore();
    run(user(marked(B0)), store);
    const blocks: RequestBlock[] = [B0, ...fillers(30)];
    blocks[2] = marked(blocks[2]!);
    blocks[30] = marked(blocks[30]!);
    const p = plan(user(...blocks), store);
    expect(p.read?.position).toBe(0);
    expect(p.writes.map((w) => w.position)).toEqual([2, 30]);
    expect(p.usage).toMatchObject({ cache_read_input_tokens: 12, cache_creation_input_tokens: 30, input_tokens: 0 });
  });

  it('finds only entries that an earlier request wrote at a marker', () => {
    const store = new CacheStore();
    run(user(B0, marked(text(3, 'x'))), store);
    // The prefix up to B0 was never a marker's entry: a marker right after it cannot read it.
    expect(plan(user(B0, marked(text(3, 'y'))), store).usage.cache_read_input_tokens).toBe(0);
  });

  it('below the minimum cacheable length both counters are 0; at it, the prefix is written', () => {
    const store = new CacheStore();
    expect(run(user(marked(text(9, 'm')), text(4, 'n')), store)).toMatchObject({
      input_tokens: 13,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    });
    expect(store.size(0)).toBe(0);
    expect(run(user(marked(text(10, 'm')), text(4, 'n')), store)).toMatchObject({
      input_tokens: 4,
      cache_creation_input_tokens: 10,
    });
    expect(run(user(marked(text(10, 'm')), text(4, 'n')), store, 0, 1024)).toMatchObject({
      input_tokens: 14,
      cache_read_input_tokens: 0,
    });
  });

  it('bills mixed TTLs by the A/B/C rule', () => {
    const store = new CacheStore();
    const [p1, p2, p3] = [text(20, 'p'), text(30, 'q'), text(30, 'r')];
    expect(run(user(marked(p1, '1h'), p2, p3, text(10, 's')), store)).toMatchObject({
      ephemeral_1h_input_tokens: 20,
      ephemeral_5m_input_tokens: 0,
      input_tokens: 70,
    });
    // A = 20 (read), B = 50 (last 1h marker), C = 80 (last marker): 1h 30, 5m 30, input 10.
    expect(run(user(marked(p1, '1h'), marked(p2, '1h'), marked(p3), text(10, 's')), store)).toEqual({
      input_tokens: 10,
      cache_creation_input_tokens: 60,
      cache_read_input_tokens: 20,
      ephemeral_5m_input_tokens: 30,
      ephemeral_1h_input_tokens: 30,
    });
  });
});

describe('cache plan: lifetime and visibility', () => {
  const req = user(marked(B0), text(2, 'tail'));
  const FIVE_MIN = 300_000;

  it('expires 5 minutes after the last request that wrote or read; a hit refreshes it', () => {
    const store = new CacheStore();
    run(req, store, 0);
    expect(run(req, store, FIVE_MIN - 1).cache_read_input_tokens).toBe(12);
    expect(run(req, store, 2 * FIVE_MIN - 2).cache_read_input_tokens).toBe(12);
    expect(run(req, store, 3 * FIVE_MIN - 2).cache_read_input_tokens).toBe(0);
    const fresh = new CacheStore();
    run(req, fresh, 0);
    expect(plan(req, fresh, FIVE_MIN).usage.cache_read_input_tokens).toBe(0);
    expect(fresh.expiredCount).toBe(1);
  });

  it('keeps a 1h entry for an hour', () => {
    const store = new CacheStore();
    const hour = user(marked(B0, '1h'), text(2, 'tail'));
    run(hour, store, 0);
    expect(plan(hour, store, 3_600_000 - 1).usage.cache_read_input_tokens).toBe(12);
    expect(plan(hour, store, 3_600_000).usage.cache_read_input_tokens).toBe(0);
  });

  it('makes a write readable only when committed (the response began)', () => {
    const store = new CacheStore();
    const first = plan(req, store, 0);
    applyRead(store, first, 0, 0);
    const second = plan(req, store, 1);
    expect(second.usage).toMatchObject({ cache_read_input_tokens: 0, cache_creation_input_tokens: 12 });
    commitWrites(store, first, 0, 5);
    commitWrites(store, second, 1, 6);
    expect(store.size(6)).toBe(1);
    expect(plan(req, store, 7).usage.cache_read_input_tokens).toBe(12);
  });

  it('runs the lifetime from the request start, not from its commit', () => {
    const store = new CacheStore();
    const p = plan(req, store, 0);
    commitWrites(store, p, 0, 10_000);
    expect(store.entries(10_000)[0]!.expiresAt).toBe(FIVE_MIN);
  });
});
