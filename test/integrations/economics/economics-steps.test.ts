import { describe, expect, it } from 'vitest';
import {
  DEFAULT_FRESH_AGENT_TOKENS,
  economicsCase,
  prefixSavings,
  priceRequest,
  priceStrategies,
} from '../../../src/integrations/economics/economics.ts';
import type { EconomicsInput } from '../../../src/integrations/economics/types.ts';

/*
 * The steps `forkEconomics` runs (check → price the strategies → the prefix's savings → the
 * totals), each on its own. Sonnet 4.6: $3 per million input tokens, 3,000 nano-dollars a token;
 * reads 0.1x, writes 1.25x (5m) or 2x (1h); the seed convention writes at 1x.
 */
const MODEL = 'claude-sonnet-4-6';
const P = 48_500;
const D = 200;
const IN = 3_000;
const base = { prefixTokens: P, directiveTokens: D, children: 5, model: MODEL } as const;
const check = (input: EconomicsInput) => economicsCase(input, 'model', 'date', 'ttl');

describe('check: the input, its defaults, what the parent has cached', () => {
  it('fills in the defaults; a cold parent has cached nothing, a warm one the whole prefix', () => {
    const cold = check(base);
    expect(cold).toMatchObject({ P, D, N: 5, C: 0, cacheable: true, seed: false });
    expect(cold.opts).toMatchObject({ ttl: '5m', convention: 'real', freshTokens: DEFAULT_FRESH_AGENT_TOKENS });
    expect(cold.info.id).toBe(MODEL);
    expect(check({ ...base, warmParent: true }).C).toBe(P);
    expect(check({ ...base, cachedPrefixTokens: 1_000 }).C).toBe(1_000);
    expect(check({ ...base, convention: 'seed' }).seed).toBe(true);
  });

  it('a prefix below the minimum cacheable length is never cached, even by a warm parent', () => {
    const short = check({ ...base, prefixTokens: 100, warmParent: true });
    expect(short).toMatchObject({ cacheable: false, C: 0 });
  });

  it('refuses what contradicts itself, naming the field the caller gave', () => {
    expect(() => check({ ...base, cachedPrefixTokens: P + 1 })).toThrow(/^cachedPrefixTokens: 48501 exceeds/);
    expect(() => check({ ...base, warmParent: true, cachedPrefixTokens: 10 })).toThrow(/contradicts warmParent/);
    expect(() => economicsCase({ ...base, ttl: '12h' }, 'model', 'date', 'plan.ttl')).toThrow(
      /^plan\.ttl: 12h is a lifetime of OpenAI's Responses API/,
    );
    expect(() => economicsCase({ ...base, model: 'no-such-model' }, 'plan.model', 'date', 'ttl')).toThrow(
      /^plan\.model: "no-such-model" is not in the model catalogue/,
    );
    expect(() => check({ ...base, children: 0 })).toThrow(/^economics: /);
  });
});

describe('price: one request at its convention’s cache prices', () => {
  const req = { r: 10, w: 10, i: 10 };
  it('real: reads 0.1x, writes 1.25x for 5m and 2x for 1h', () => {
    expect(priceRequest(check(base), req)).toMatchObject({ input: IN, read: 300, write: 3_750 });
    expect(priceRequest(check(base), req).nano).toBe(10 * 300 + 10 * 3_750 + 10 * IN);
    expect(priceRequest(check({ ...base, ttl: '1h' }), req).write).toBe(6_000);
  });

  it('seed: writes at the input price and reads at 0.1x, whatever the TTL', () => {
    const seed = priceRequest(check({ ...base, convention: 'seed', ttl: '1h' }), req);
    expect(seed).toMatchObject({ input: IN, read: 300, write: IN });
  });
});

describe('strategies: the requests each strategy sends', () => {
  it('a cold fan-out: the first child writes the prefix, the later ones read it', () => {
    const s = priceStrategies(check(base));
    expect(s.firstUsage).toEqual({ r: 0, w: P, i: D });
    expect(s.laterUsage).toEqual({ r: P, w: 0, i: D });
    expect(s.first.nano).toBe(P * 3_750 + D * IN);
    expect(s.later.nano).toBe(P * 300 + D * IN);
    expect(s.noCache.nano).toBe((P + D) * IN);
    // fresh agents cached as forks are: the first writes F, the others read it
    expect(s.freshFirst.nano).toBe(DEFAULT_FRESH_AGENT_TOKENS * 3_750 + D * IN);
    expect(s.freshLater.nano).toBe(DEFAULT_FRESH_AGENT_TOKENS * 300 + D * IN);
  });

  it('below the minimum nothing is cached; the seed convention sends fresh agents uncached', () => {
    const short = priceStrategies(check({ ...base, prefixTokens: 100 }));
    expect(short.firstUsage).toEqual({ r: 0, w: 0, i: 100 + D });
    expect(short.laterUsage).toEqual({ r: 0, w: 0, i: 100 + D });
    const seed = priceStrategies(check({ ...base, convention: 'seed' }));
    expect(seed.freshFirst.nano).toBe((DEFAULT_FRESH_AGENT_TOKENS + D) * IN);
    expect(seed.freshLater.nano).toBe(seed.freshFirst.nano);
  });
});

describe('savings: the shared prefix alone', () => {
  function savings(input: EconomicsInput) {
    const c = check(input);
    const s = priceStrategies(c);
    return prefixSavings(c, { req: s.firstUsage, priced: s.first }, { req: s.laterUsage, priced: s.later }, IN);
  }

  it('cold parent, seed: the children pay 1 + 4 × 0.1 of 5 prefixes; all in, the parent sends it once more uncached', () => {
    const cold = savings({ ...base, convention: 'seed' });
    expect(cold.forkSide).toBeCloseTo((5 - 1.4) / 5, 12);
    expect(cold.allIn).toBeCloseTo((6 - 1.4 - 1) / 6, 12);
  });

  it('warm parent, seed: every child reads; all in, the parent wrote the prefix', () => {
    const warm = savings({ ...base, convention: 'seed', warmParent: true });
    expect(warm.forkSide).toBeCloseTo((5 - 0.5) / 5, 12);
    expect(warm.allIn).toBeCloseTo((6 - 0.5 - 1) / 6, 12);
  });

  it('an empty prefix saves no share at all', () => {
    expect(savings({ ...base, prefixTokens: 0 })).toEqual({ forkSide: null, allIn: null });
  });
});
