import { describe, expect, it } from 'vitest';
import {
  LATENCY_PROFILES,
  outputMs,
  resolveLatency,
  timeToFirstTokenMs,
} from '../../../src/integrations/emulator/latency.ts';

describe('latency model', () => {
  it('grows TTFT with uncached tokens; cache reads are far cheaper', () => {
    const p = LATENCY_PROFILES.realistic;
    expect(timeToFirstTokenMs(p, { uncachedTokens: 0, cacheReadTokens: 0 })).toBe(400);
    const cold = timeToFirstTokenMs(p, { uncachedTokens: 100_000, cacheReadTokens: 0 });
    const warm = timeToFirstTokenMs(p, { uncachedTokens: 200, cacheReadTokens: 99_800 });
    expect(cold).toBe(400 + 25_000);
    expect(warm).toBeCloseTo(400 + 50 + 1996, 6);
    expect(cold / warm).toBeGreaterThan(9);
    expect(outputMs(p, 60)).toBe(1000);
  });

  it('scales fast ~100× down and turns everything off with off', () => {
    const [r, f] = [LATENCY_PROFILES.realistic, LATENCY_PROFILES.fast];
    const input = { uncachedTokens: 10_000, cacheReadTokens: 40_000 };
    expect(timeToFirstTokenMs(r, input) / timeToFirstTokenMs(f, input)).toBeCloseTo(100, 6);
    expect(outputMs(r, 600) / outputMs(f, 600)).toBeCloseTo(100, 6);
    expect(timeToFirstTokenMs(LATENCY_PROFILES.off, input)).toBe(0);
    expect(outputMs(LATENCY_PROFILES.off, 1e6)).toBe(0);
  });

  it('applies the slow fault and validates custom profiles', () => {
    const p = resolveLatency({
      baseMs: 10,
      prefillMsPerToken: 1,
      cacheReadMsPerToken: 0,
      outputTokensPerSecond: Infinity,
    });
    expect(p).toMatchObject({ slowFactor: 10, slowExtraMs: 0 });
    expect(timeToFirstTokenMs(p, { uncachedTokens: 5, cacheReadTokens: 0, slow: true })).toBe(150);
    expect(() =>
      resolveLatency({ baseMs: -1, prefillMsPerToken: 0, cacheReadMsPerToken: 0, outputTokensPerSecond: 1 }),
    ).toThrow(/baseMs/);
    expect(resolveLatency('fast')).toEqual(LATENCY_PROFILES.fast);
  });
});
