import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { breakEvenChildren, forkEconomics } from '../../../src/integrations/economics/economics.ts';
import type { EconomicsInput } from '../../../src/integrations/economics/types.ts';
import { formatEconomics } from '../../../src/integrations/economics/format.ts';
import { costNano } from '../../../src/core/ledger/cost.ts';
import type { Usage } from '../../../src/core/ledger/usage.ts';
import { findModel, mergeCatalogue } from '../../../src/core/models/catalogue.ts';

// The seed figures assume a 0.1x read price: Sonnet 4.6 ($3 in) has it.
const SEED = { prefixTokens: 48_500, directiveTokens: 200, children: 5, model: 'claude-sonnet-4-6' } as const;

describe('seed figures (P = 48,500, D = 200, N = 5, cold cache)', () => {
  it('seed convention: child 1 pays 48,700, children 2-5 pay 48,500 × 0.1 + 200 = 5,050', () => {
    const r = forkEconomics({ ...SEED, convention: 'seed' });
    expect(r.perChild).toEqual([
      {
        children: '1',
        count: 1,
        cacheReadTokens: 0,
        cacheWriteTokens: 48_500,
        inputTokens: 200,
        tokenEquivalents: 48_700,
        usd: 0.1461,
      },
      {
        children: '2-5',
        count: 4,
        cacheReadTokens: 48_500,
        cacheWriteTokens: 0,
        inputTokens: 200,
        tokenEquivalents: 5_050,
        usd: 0.01515,
      },
    ]);
    // fork 48,700 + 4 × 5,050 = 68,900; no cache 5 × 48,700 = 243,500; fresh 5 × (16,000 + 200) = 81,000.
    expect(r.fork).toEqual({ tokenEquivalents: 68_900, usd: 0.2067 });
    expect(r.noCache).toEqual({ tokenEquivalents: 243_500, usd: 0.7305 });
    expect(r.freshAgents).toEqual({ tokenEquivalents: 81_000, usd: 0.243 });
    expect(r.savingsVsNoCache).toBe(174_600 / 243_500); // 71.70 %
    expect(r.savingsVsFreshAgents).toBe(12_100 / 81_000); // 14.94 %
  });

  it('real convention, 5m: child 1 writes at 1.25x: 60,625 + 200 = 60,825', () => {
    const r = forkEconomics({ ...SEED, convention: 'real' });
    expect(r.perChild.map((c) => [c.children, c.tokenEquivalents])).toEqual([
      ['1', 60_825],
      ['2-5', 5_050],
    ]);
    // 60,825 + 20,200 = 81,025.
    expect(r.fork.tokenEquivalents).toBe(81_025);
    expect(r.savingsVsNoCache).toBe(162_475 / 243_500); // 66.72 %
    // Fresh agents (src/core/ledger/fresh-agents.ts), cached as forks are: the first writes F = 16,000
    // at 1.25x (20,000 + 200), the others read it at 0.1x (1,600 + 200): 20,200 + 4 × 1,800 =
    // 27,400. They carry no 48,500-token history: forking costs more, at every N.
    expect(r.freshAgents.tokenEquivalents).toBe(27_400);
    expect(r.savingsVsFreshAgents).toBe(-53_625 / 27_400);
    expect(r.breakEven).toEqual({ vsNoCache: 2, vsFreshAgents: null });
  });

  it('real convention, 1h: child 1 writes at 2x: 97,000 + 200 = 97,200', () => {
    const r = forkEconomics({ ...SEED, convention: 'real', ttl: '1h' });
    expect(r.perChild[0]?.tokenEquivalents).toBe(97_200);
    expect(r.fork.tokenEquivalents).toBe(117_400);
    expect(r.savingsVsNoCache).toBe(126_100 / 243_500); // 51.79 %
    // fresh agents: 16,000 × 2 + 200 = 32,200, then 1,800 each
    expect(r.freshAgents.tokenEquivalents).toBe(32_200 + 4 * 1_800);
    expect(r.breakEven).toEqual({ vsNoCache: 3, vsFreshAgents: null });
  });

  it('break-even N under the seed convention: 2 vs no cache, 4 vs fresh agents', () => {
    // vs fresh: 48,700 + (N − 1) × 5,050 < N × 16,200  ⇔  N > 43,650 / 11,150 = 3.91
    expect(forkEconomics({ ...SEED, convention: 'seed' }).breakEven).toEqual({ vsNoCache: 2, vsFreshAgents: 4 });
  });
});

describe('the seed claim: "100K history, 8 forks, savings over 90%" (D = 200)', () => {
  const claim = (extra: Partial<EconomicsInput>) =>
    forkEconomics({ prefixTokens: 100_000, directiveTokens: 200, children: 8, model: 'claude-sonnet-4-6', ...extra });

  it('does not hold with a cold cache (first child pays the prefix)', () => {
    // no cache: 8 × 100,200 = 801,600.
    // seed: 100,200 + 7 × 10,200 = 171,600 → 78.59 %; real 5m: 125,200 + 71,400 = 196,600 → 75.47 %;
    // real 1h: 200,200 + 71,400 = 271,600 → 66.12 %.
    expect(claim({ convention: 'seed' }).savingsVsNoCache).toBe(630_000 / 801_600);
    expect(claim({ convention: 'real' }).savingsVsNoCache).toBe(605_000 / 801_600);
    expect(claim({ convention: 'real', ttl: '1h' }).savingsVsNoCache).toBe(530_000 / 801_600);
    expect(claim({ convention: 'seed' }).savingsVsNoCache!).toBeLessThan(0.9);
  });

  it('comes within 0.2 points with a warm parent, but never exceeds 90 %', () => {
    // Every child reads: 8 × 10,200 = 81,600 → 720,000 / 801,600 = 89.82 %, in both conventions.
    for (const convention of ['seed', 'real'] as const) {
      const r = claim({ convention, warmParent: true });
      expect(r.fork.tokenEquivalents).toBe(81_600);
      expect(r.savingsVsNoCache).toBe(720_000 / 801_600);
      expect(r.savingsVsNoCache!).toBeGreaterThan(0.898);
      expect(r.savingsVsNoCache!).toBeLessThan(0.9);
    }
    // Only a zero-token directive reaches exactly 90 % (= 1 − the 0.1 read multiplier).
    expect(claim({ warmParent: true, directiveTokens: 0 }).savingsVsNoCache).toBe(0.9);
  });

  it('no fan-out of any shape saves more than 90 % against no cache', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1_024, max: 1_000_000 }),
        fc.nat({ max: 5_000 }),
        fc.integer({ min: 1, max: 64 }),
        fc.boolean(),
        (P, D, N, warm) => {
          const r = forkEconomics({
            prefixTokens: P,
            directiveTokens: D,
            children: N,
            warmParent: warm,
            convention: 'seed',
            model: 'claude-sonnet-4-6',
          });
          expect(r.savingsVsNoCache!).toBeLessThanOrEqual(0.9);
        },
      ),
    );
  });
});

describe('side figures quoted in docs/economics.md', () => {
  it('warm seed example, realistic warm parent, 116K prefix', () => {
    // Warm: 5 × 5,050 = 25,250 → 218,250 / 243,500 = 89.63 % vs no cache.
    expect(forkEconomics({ ...SEED, warmParent: true }).fork.tokenEquivalents).toBe(25_250);
    // Parent cached 46,000; the 2,500-token tail is written: 4,600 + 3,125 + 200 = 7,925.
    const tail = forkEconomics({ ...SEED, cachedPrefixTokens: 46_000 });
    expect(tail.perChild[0]?.tokenEquivalents).toBe(7_925);
    expect(tail.savingsVsNoCache).toBe((243_500 - 28_125) / 243_500);
    // 100K history + 16K system/tools, warm: 8 × 11,800 = 94,400 of 929,600 → 89.85 %.
    const big = forkEconomics({
      prefixTokens: 116_000,
      directiveTokens: 200,
      children: 8,
      warmParent: true,
      model: 'claude-sonnet-4-6',
    });
    expect(big.savingsVsNoCache).toBe((929_600 - 94_400) / 929_600);
    // Cold break-even vs fresh agents for the 90 % claim's fan-out: 16 under the reference chapter's
    // uncached fresh agents; never against fresh agents that cache as forks do (5m and 1h).
    const claim = { prefixTokens: 100_000, directiveTokens: 200, children: 8, model: 'claude-sonnet-4-6' } as const;
    expect(forkEconomics({ ...claim, convention: 'seed' }).breakEven.vsFreshAgents).toBe(16);
    expect(forkEconomics({ ...claim }).breakEven.vsFreshAgents).toBe(null);
    expect(forkEconomics({ ...claim, ttl: '1h' }).breakEven.vsFreshAgents).toBe(null);
    // a fresh head below the minimum cacheable length is never cached: they pay it each
    const small = forkEconomics({ ...claim, prefixTokens: 2_000, freshTokens: 800 });
    expect(small.freshAgents.tokenEquivalents).toBe(8 * 1_000);
  });
});

describe('breakEvenChildren', () => {
  it('agrees with counting children one by one', () => {
    fc.assert(
      fc.property(fc.nat({ max: 200_000 }), fc.nat({ max: 200_000 }), fc.nat({ max: 200_000 }), (a, b, c) => {
        const first = Math.max(a, b); // the first child never pays less than a later one
        let brute: number | null = null;
        // When an answer exists it is at most (first − b) / (c − b) + 1 ≤ 200,001.
        for (let n = 1; n <= 200_002 && brute === null; n++) if (first + (n - 1) * b < n * c) brute = n;
        expect(breakEvenChildren(first, b, c)).toBe(brute);
      }),
      { numRuns: 200 },
    );
  });

  it('with a baseline whose first child may differ: from which N on forking stays cheaper', () => {
    fc.assert(
      fc.property(
        fc.nat({ max: 5_000 }),
        fc.nat({ max: 5_000 }),
        fc.nat({ max: 5_000 }),
        fc.nat({ max: 5_000 }),
        (a, b, c, d) => {
          const diff = (n: number): number => a + (n - 1) * b - (c + (n - 1) * d);
          // the difference is linear in N: past the horizon its sign no longer changes
          const horizon = 20_000;
          let from: number | null = null;
          for (let n = horizon; n >= 1 && diff(n) < 0; n--) from = n;
          expect(breakEvenChildren(a, b, c, d)).toBe(from);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('cache states and model rules', () => {
  it('a partly cached prefix: child 1 reads the cached part and writes the rest', () => {
    // 40,000 read × 0.1 + 8,500 written × 1.25 + 200 = 4,000 + 10,625 + 200 = 14,825.
    const r = forkEconomics({ ...SEED, cachedPrefixTokens: 40_000 });
    expect(r.perChild[0]).toMatchObject({ cacheReadTokens: 40_000, cacheWriteTokens: 8_500, tokenEquivalents: 14_825 });
  });

  it('caches nothing below the minimum cacheable length (Haiku 4.5: 4,096)', () => {
    const r = forkEconomics({
      prefixTokens: 4_000,
      directiveTokens: 100,
      children: 3,
      model: 'claude-haiku-4-5',
      warmParent: true,
    });
    expect(r.cacheable).toBe(false);
    expect(r.perChild).toEqual([expect.objectContaining({ children: '1-3', tokenEquivalents: 4_100 })]);
    expect(r.fork).toEqual(r.noCache);
    expect(r.breakEven.vsNoCache).toBeNull();
  });

  it('prices USD with the model (Opus 4.8: $5/M input)', () => {
    // Seed convention child 1: 48,700 × $15/M = $0.7305.
    expect(forkEconomics({ ...SEED, convention: 'seed', model: 'claude-opus-4-8' }).perChild[0]?.usd).toBe(0.2435);
  });

  it.each([
    [{ ...SEED, prefixTokens: -1 }, /prefixTokens/],
    [{ ...SEED, directiveTokens: 2.5 }, /directiveTokens/],
    [{ ...SEED, children: 0 }, /children/],
    [{ ...SEED, model: 'claude-nope' }, /model: "claude-nope" is not in the model catalogue/],
    [{ ...SEED, model: 'claude-opus-4-1' }, /model: "claude-opus-4-1" has no prices \(retired; use claude-opus-5-5\)/],
    [{ ...SEED, ttl: '2h' as never }, /ttl/],
    [{ ...SEED, cachedPrefixTokens: 50_000 }, /cachedPrefixTokens: 50000 exceeds prefixTokens/],
    [{ ...SEED, cachedPrefixTokens: 1, warmParent: true }, /cachedPrefixTokens: contradicts warmParent/],
  ])('rejects bad input %#', (input, message) => {
    expect(() => forkEconomics(input)).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTION', message: expect.stringMatching(message) }),
    );
  });
});

describe('per-model read multipliers (100K prefix, D = 200, 8 forks, warm parent)', () => {
  const shape = {
    prefixTokens: 100_000,
    directiveTokens: 200,
    children: 8,
    warmParent: true,
    date: '2026-11-30',
  } as const;

  it('Opus 5.5 reads at 0.05x: fork-side 95%, all-in 1 − (1.25 + 8 × 0.05) / 9', () => {
    const r = forkEconomics({ ...shape, model: 'claude-opus-5-5' });
    expect(r.readMultiplier).toBe(0.05);
    expect(r.forkSideSavings).toBeCloseTo(0.95, 12);
    expect(r.allInSavings).toBeCloseTo(1 - (1.25 + 8 * 0.05) / 9, 12);
    expect(r.band).toBeNull();
  });

  it('Fable 5.2 reads at 0.025x: fork-side 97.5%, above the 90% a 0.1x price allows', () => {
    const r = forkEconomics({ ...shape, model: 'claude-fable-5-2' });
    expect(r.readMultiplier).toBe(0.025);
    expect(r.forkSideSavings).toBeCloseTo(0.975, 12);
    expect(r.savingsVsNoCache!).toBeGreaterThan(0.9);
  });

  it('Haiku 5.5 at a 100K prefix is priced in band B (every request is over 100,000 tokens)', () => {
    const r = forkEconomics({ ...shape, model: 'claude-haiku-5-5' });
    expect(r.band).toBe('B');
    // B: $0.50 in, $0.05 read: each child 100,000 × 0.05 + 200 × 0.50 per M = $0.0051.
    expect(r.perChild[0]?.usd).toBeCloseTo(0.0051, 12);
    expect(r.forkSideSavings).toBeCloseTo(0.9, 12);
    // A smaller fan-out stays in band A.
    expect(forkEconomics({ ...shape, prefixTokens: 50_000, model: 'claude-haiku-5-5' }).band).toBe('A');
  });

  it('Sonnet 5.5 is priced by the row in force on the date', () => {
    expect(forkEconomics({ ...shape, model: 'claude-sonnet-5-5', date: '2026-10-01' }).readMultiplier).toBe(0.1);
    expect(forkEconomics({ ...shape, model: 'claude-sonnet-5-5', date: '2026-10-07' }).readMultiplier).toBe(0.05);
  });

  it("the seed convention keeps the seed's 0.1x read price whatever the model (figures stay reproducible)", () => {
    const r = forkEconomics({
      prefixTokens: 48_500,
      directiveTokens: 200,
      children: 5,
      convention: 'seed',
      model: 'claude-opus-5-5',
    });
    expect(r.perChild.map((c) => c.tokenEquivalents)).toEqual([48_700, 5_050]);
  });
});

describe("the Responses API's write lifetimes (30m, 12h)", () => {
  const RESP = { prefixTokens: 48_500, directiveTokens: 200, children: 5, model: 'gpt-5', date: '2026-12-01' } as const;
  // an OpenAI row whose writes are not free (the built-in gpt-5 writes at 1x for both lifetimes)
  const table = mergeCatalogue({
    date: '2026-12-01',
    models: [
      {
        id: 'gpt-5',
        prices: [
          {
            effectiveFrom: '2026-09-22',
            inputPerMTok: 1.25,
            outputPerMTok: 10,
            cacheWrite5mMultiplier: 1.25,
            cacheWrite1hMultiplier: 2,
            cacheReadMultiplier: 0.1,
          },
        ],
      },
    ],
  });

  it('prices a 30-minute write at the short rate and a 12-hour write at the long one', () => {
    const m30 = forkEconomics({ ...RESP, ttl: '30m', table });
    const h12 = forkEconomics({ ...RESP, ttl: '12h', table });
    expect(m30.ttl).toBe('30m');
    // child 1 writes 48,500 at 1.25x (60,625 + 200), at 2x (97,000 + 200); the others read at 0.1x
    expect(m30.perChild.map((c) => c.tokenEquivalents)).toEqual([60_825, 5_050]);
    expect(h12.perChild.map((c) => c.tokenEquivalents)).toEqual([97_200, 5_050]);
    expect(h12.fork.tokenEquivalents - m30.fork.tokenEquivalents).toBe(48_500 * 0.75);
    // the built-in gpt-5 row writes at 1x for either lifetime: the 12 hours cost nothing more
    const builtin = [forkEconomics({ ...RESP, ttl: '30m' }), forkEconomics({ ...RESP, ttl: '12h' })];
    expect(builtin.map((r) => r.perChild[0]!.tokenEquivalents)).toEqual([48_700, 48_700]);
    expect(formatEconomics([h12])).toContain('writes at 2x (12h TTL)');
  });

  it("prices child 1's write as the ledger prices the same usage split by TTL", () => {
    const info = findModel('gpt-5', table)!;
    const at = Date.parse('2026-12-01T00:00:00Z');
    for (const ttl of ['30m', '12h'] as const) {
      const usage: Usage = {
        input_tokens: 200,
        cache_creation_input_tokens: 48_500,
        cache_read_input_tokens: 0,
        output_tokens: 0,
        cache_creation: {
          ephemeral_5m_input_tokens: 0,
          ephemeral_1h_input_tokens: 0,
          ...(ttl === '30m' ? { ttl_30m_input_tokens: 48_500 } : { ttl_12h_input_tokens: 48_500 }),
        },
      };
      const ledgerUsd = costNano(usage, info, at, table).total / 1e9;
      expect(forkEconomics({ ...RESP, ttl, table }).perChild[0]!.usd).toBeCloseTo(ledgerUsd, 12);
    }
  });

  it('refuses a Responses lifetime for a model another API serves, naming ttl', () => {
    expect(() => forkEconomics({ ...SEED, ttl: '12h' })).toThrow(
      expect.objectContaining({
        code: 'INVALID_OPTION',
        data: { field: 'ttl' },
        message: expect.stringMatching(/^ttl: 12h is a lifetime of OpenAI's Responses API; claude-sonnet-4-6/),
      }),
    );
  });
});
