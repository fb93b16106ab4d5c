import { describe, expect, it } from 'vitest';
import { UsageLedger } from '../../../src/core/ledger/ledger.ts';
import type { LedgerRecordInput } from '../../../src/core/ledger/records.ts';

const SONNET = 'claude-sonnet-4-6';

function rec(
  partial: Partial<LedgerRecordInput> & Pick<LedgerRecordInput, 'forkId' | 'kind' | 'usage'>,
): LedgerRecordInput {
  return { turn: 0, model: SONNET, at: 0, ...partial };
}

/**
 * A hand-worked fan-out (Sonnet 4.5; per token: in $3/M, 5m write $3.75/M, read $0.30/M, out $15/M).
 *
 *   root t0 @0s        in 50, write 2,950,             out 400   total input 3,000
 *   root t1 @10s       in 20, write 1,030, read 2,950, out 300   total input 4,000
 *     → root's last request cached read + write = 3,980 tokens of what becomes the shared prefix.
 *   shared prefix S = 4,400 (root t1's prefix + its tool_use answer + placeholders)
 *   warm-up @20s       write 420, read 3,980                       total input 4,400
 *   f1, f2 t0 @21s     write 100 (own directive), read 4,400, out 250   total input 4,500
 *   f3 t0 @21s         write 520, read 3,980, out 250 (a partial miss)  total input 4,500
 *   f1 t1 @40s         in 10, write 300, read 4,500, out 200  (a later turn: not a fan-out request)
 *
 * Fan-out requests: warm-up, f1 t0, f2 t0, f3 t0.
 *   uncached at start U = S − cached = 4,400 − 3,980 = 420
 *   max_fanout_reads = Σ S_r − U = 4 × 4,400 − 420 = 17,180
 *   cache reads = 3,980 + 4,400 + 4,400 + 3,980 = 16,760
 *   fanout_hit_ratio = 16,760 / (4,400 + 3 × 4,500 = 17,900) = 838/895
 *   cache_efficiency = 16,760 / 17,180 = 838/859
 */
function fanout(start = 20_000, extra: Partial<LedgerRecordInput> = {}): UsageLedger {
  const ledger = new UsageLedger();
  ledger.record(
    rec({
      forkId: 'root',
      kind: 'parent',
      turn: 0,
      at: 0,
      usage: { input_tokens: 50, cache_creation_input_tokens: 2_950, output_tokens: 400 },
    }),
  );
  ledger.record(
    rec({
      forkId: 'root',
      kind: 'parent',
      turn: 1,
      at: 10_000,
      usage: {
        input_tokens: 20,
        cache_creation_input_tokens: 1_030,
        cache_read_input_tokens: 2_950,
        output_tokens: 300,
      },
    }),
  );
  ledger.record(
    rec({
      forkId: 'root',
      kind: 'warmup',
      turn: 2,
      at: start,
      sharedPrefixTokens: 4_400,
      usage: { cache_creation_input_tokens: 420, cache_read_input_tokens: 3_980 },
      ...extra,
    }),
  );
  const child = {
    parentId: 'root',
    kind: 'fork',
    turn: 0,
    at: start + 1_000,
    sharedPrefixTokens: 4_400,
    freshInputTokens: 16_100,
  } as const;
  ledger.record(
    rec({
      ...child,
      forkId: 'f1',
      usage: { cache_creation_input_tokens: 100, cache_read_input_tokens: 4_400, output_tokens: 250 },
    }),
  );
  ledger.record(
    rec({
      ...child,
      forkId: 'f2',
      usage: { cache_creation_input_tokens: 100, cache_read_input_tokens: 4_400, output_tokens: 250 },
    }),
  );
  ledger.record(
    rec({
      ...child,
      forkId: 'f3',
      usage: { cache_creation_input_tokens: 520, cache_read_input_tokens: 3_980, output_tokens: 250 },
    }),
  );
  ledger.record(
    rec({
      forkId: 'f1',
      kind: 'fork',
      turn: 1,
      at: start + 20_000,
      usage: { input_tokens: 10, cache_creation_input_tokens: 300, cache_read_input_tokens: 4_500, output_tokens: 200 },
    }),
  );
  return ledger;
}

describe('fan-out metrics (docs/architecture.md definitions)', () => {
  it("matches the hand-worked example, deriving the cached part from the parent's last request", () => {
    const s = fanout().summary();
    expect(s.cache).toMatchObject({
      fanouts: 1,
      fanout_requests: 4,
      fanout_input_tokens: 17_900,
      fanout_cache_read_input_tokens: 16_760,
      max_fanout_reads: 17_180,
    });
    expect(s.cache.fanout_hit_ratio).toBe(16_760 / 17_900);
    expect(s.cache.cache_efficiency).toBe(16_760 / 17_180);
    expect(s.cache.by_fanout).toEqual([
      expect.objectContaining({
        key: 'owner:root',
        owner_id: 'root',
        requests: 4,
        shared_prefix_tokens: 4_400,
        uncached_at_start: 420,
      }),
    ]);
  });

  it("treats the prefix as uncached when the parent's last request is older than the 5-minute lifetime, but never as more than the requests missed", () => {
    // t1 was at 10 s; the fan-out starts 300.001 s later: by the clock U = 4,400. But the
    // requests read all but 840 of the 17,600 shared tokens they sent (the warm-up and f3 missed
    // 420 each): the rest was cached for them, so U = 840 and max = 17,600 − 840 = 16,760.
    const s = fanout(10_000 + 300_001).summary();
    expect(s.cache.by_fanout[0]!.uncached_at_start).toBe(840);
    expect(s.cache.max_fanout_reads).toBe(16_760);
    expect(s.cache.cache_efficiency).toBe(1); // once 16,760 / 13,200: the records contradicted the clock
  });

  it('prefers an explicit cachedPrefixTokens, within what the requests missed', () => {
    // Declared cold: U = 4,400, bounded by the 840 tokens missed.
    expect(fanout(20_000, { cachedPrefixTokens: 0 }).summary().cache.max_fanout_reads).toBe(16_760);
    // Declared warm: U = 0 → max = 17,600; the 840 missed lower the efficiency.
    const warm = fanout(20_000, { cachedPrefixTokens: 4_400 }).summary().cache;
    expect([warm.max_fanout_reads, warm.cache_efficiency]).toEqual([17_600, 16_760 / 17_600]);
  });

  it("is at most 1 for a prefix pre-warmed by a request the ledger does not hold (the app's own, an earlier pass)", () => {
    // An AI SDK app's fork tool: the app's request cached S = 4,000; the ledger has none of it.
    // The warm-up and three children each read S: nothing was missed, nothing had to be written.
    const ledger = new UsageLedger();
    ledger.record(
      rec({ forkId: 'app', kind: 'warmup', sharedPrefixTokens: 4_000, usage: { cache_read_input_tokens: 4_000 } }),
    );
    for (const id of ['c1', 'c2', 'c3'])
      ledger.record(
        rec({
          forkId: id,
          parentId: 'app',
          kind: 'fork',
          at: 1_000,
          sharedPrefixTokens: 4_000,
          usage: { cache_read_input_tokens: 4_000, cache_creation_input_tokens: 200, output_tokens: 10 },
        }),
      );
    const cache = ledger.summary().cache;
    expect(cache.by_fanout[0]!.uncached_at_start).toBe(0);
    expect(cache.max_fanout_reads).toBe(16_000);
    expect(cache.cache_efficiency).toBe(1); // once 16,000 / 12,000 = 1.333
  });

  it('separates two fan-outs of one parent by prefixId; max 0 means efficiency 1', () => {
    const ledger = new UsageLedger();
    ledger.record(rec({ forkId: 'root', kind: 'parent', usage: { input_tokens: 5_000 } }));
    const child = (forkId: string, prefixId: string, read: number, write: number): LedgerRecordInput =>
      rec({
        forkId,
        parentId: 'root',
        kind: 'fork',
        at: 1_000,
        prefixId,
        sharedPrefixTokens: 5_000,
        usage: { input_tokens: 50, cache_read_input_tokens: read, cache_creation_input_tokens: write },
      });
    // Fan-out A (cold, first-child warm-up): a1 writes 5,000, a2 reads 5,000. max = 10,000 − 5,000.
    ledger.record(child('a1', 'A', 0, 5_000));
    ledger.record(child('a2', 'A', 5_000, 0));
    // Fan-out B: a single cold child. max = 5,000 − 5,000 = 0 → efficiency defined as 1.
    ledger.record(child('b1', 'B', 0, 5_000));
    const s = ledger.summary();
    expect(s.cache.by_fanout.map((g) => [g.key, g.max_fanout_reads, g.cache_efficiency])).toEqual([
      ['A', 5_000, 1],
      ['B', 0, 1],
    ]);
    expect(s.cache).toMatchObject({ fanouts: 2, fanout_requests: 3, max_fanout_reads: 5_000, cache_efficiency: 1 });
    expect(s.cache.fanout_hit_ratio).toBe(5_000 / 15_150);
  });

  it("counts nothing as readable below the model's minimum cacheable length", () => {
    const ledger = new UsageLedger();
    for (const id of ['c1', 'c2']) {
      ledger.record(
        rec({ forkId: id, parentId: 'root', kind: 'fork', sharedPrefixTokens: 900, usage: { input_tokens: 1_000 } }),
      );
    }
    expect(ledger.summary().cache).toMatchObject({ max_fanout_reads: 0, cache_efficiency: 1, fanout_hit_ratio: 0 });
  });

  it('has a hit ratio of 0 and efficiency of 1 with no fan-out at all', () => {
    const ledger = new UsageLedger();
    ledger.record(rec({ forkId: 'solo', kind: 'parent', usage: { input_tokens: 10 } }));
    expect(ledger.summary().cache).toMatchObject({
      fanouts: 0,
      fanout_hit_ratio: 0,
      max_fanout_reads: 0,
      cache_efficiency: 1,
    });
  });
});

describe('baselines', () => {
  /*
   * Nano-dollars per token: in 3,000, 5m write 3,750, read 300, out 15,000.
   *   root t0   150,000 + 11,062,500 + 6,000,000              = 17,212,500
   *   root t1    60,000 +  3,862,500 +   885,000 + 4,500,000  =  9,307,500
   *   warm-up             1,575,000 + 1,194,000               =  2,769,000
   *   f1 t0, f2 t0          375,000 + 1,320,000 + 3,750,000   =  5,445,000 each
   *   f3 t0               1,950,000 + 1,194,000 + 3,750,000   =  6,894,000
   *   f1 t1      30,000 + 1,125,000 + 1,350,000 + 3,000,000   =  5,505,000
   *   actual = 52,578,000 → $0.052578
   * no_cache: input 3,000 + 4,000 + 4,400 + 3 × 4,500 + 4,810 = 29,710 × 3,000 = 89,130,000;
   *   output 400 + 300 + 3 × 250 + 200 = 1,650 × 15,000 = 24,750,000 → $0.11388
   * fresh_agents (src/core/ledger/fresh-agents.ts): the forks' requests and the warm-up are replaced,
   *   2,769,000 + 2 × 5,445,000 + 6,894,000 + 5,505,000 = 26,058,000, by fresh agents' requests:
   *   F + D = 16,100 (freshInputTokens), F = 16,100 − (4,500 − 4,400) = 16,000, f1 sent first.
   *   f1 t0  write 16,100, out 250                         60,375,000 + 3,750,000             = 64,125,000
   *   f1 t1  read 16,100, write 310 (its growth), out 200   4,830,000 + 1,162,500 + 3,000,000 =  8,992,500
   *   f2, f3 read 16,000 (f1's F), write 100, out 250       4,800,000 +   375,000 + 3,750,000 =  8,925,000 each
   *   fresh_agents = 52,578,000 − 26,058,000 + 90,967,500 = 117,487,500 → $0.1174875
   */
  it('computes actual, no_cache and fresh_agents from the same token counts', () => {
    const s = fanout().summary();
    expect(s.cost_usd).toMatchObject({ actual: 0.052578, no_cache: 0.11388, fresh_agents: 0.1174875 });
    expect(s.savings.vs_no_cache).toBe((113_880_000 - 52_578_000) / 113_880_000);
    expect(s.savings.vs_fresh_agents).toBe((117_487_500 - 52_578_000) / 117_487_500);
    expect(s.missing_fresh_input).toEqual([]);
  });

  it('reports fresh_agents as null when a fork child has no fresh-agent size, unless a default is set', () => {
    const make = (options: ConstructorParameters<typeof UsageLedger>[0]): UsageLedger => {
      const ledger = new UsageLedger(options);
      ledger.record(
        rec({ forkId: 'k1', parentId: 'p', kind: 'fork', usage: { input_tokens: 1_000, output_tokens: 10 } }),
      );
      return ledger;
    };
    expect(make({}).summary()).toMatchObject({
      cost_usd: { fresh_agents: null },
      missing_fresh_input: ['k1'],
      savings: { vs_fresh_agents: null },
    });
    // 2,000 written at $3.75/M (a fresh agent caches its request as a fork does) + 10 × $15/M.
    expect(make({ defaultFreshInputTokens: 2_000 }).summary().cost_usd.fresh_agents).toBe(0.00765);
  });
});

describe('cache efficiency counts reads of the shared prefix only', () => {
  it('a first request re-sent after its host died reads its own earlier write too: efficiency stays 1', () => {
    // S = 4,000, cold. f1 writes S; f2 reads S; f3's first request was answered once on a host
    // that died before reporting it, then re-sent with the same bytes: it reads S plus its own
    // directive (300 tokens) from that earlier write. Sharing read 2 × S of at most 2 × S.
    const ledger = new UsageLedger();
    const child = { parentId: 'root', kind: 'fork', turn: 0, at: 1_000, sharedPrefixTokens: 4_000 } as const;
    ledger.record(rec({ ...child, forkId: 'f1', usage: { cache_creation_input_tokens: 4_300, output_tokens: 10 } }));
    ledger.record(
      rec({
        ...child,
        forkId: 'f2',
        usage: { cache_creation_input_tokens: 300, cache_read_input_tokens: 4_000, output_tokens: 10 },
      }),
    );
    ledger.record(rec({ ...child, forkId: 'f3', usage: { cache_read_input_tokens: 4_300, output_tokens: 10 } }));
    const cache = ledger.summary().cache;
    expect(cache.max_fanout_reads).toBe(8_000);
    expect(cache.fanout_cache_read_input_tokens).toBe(8_300); // every read, as billed
    expect(cache.cache_efficiency).toBe(1); // 8,000 of 8,000: the extra 300 are not sharing
    expect(cache.fanout_hit_ratio).toBe(8_300 / 12_900);
  });
});
