import { describe, expect, it } from 'vitest';
import { costUsd } from '../../../src/core/ledger/cost.ts';
import { UsageLedger } from '../../../src/core/ledger/ledger.ts';
import type { Usage } from '../../../src/core/ledger/usage.ts';

const at = (day: string) => Date.parse(`${day}T12:00:00Z`);
const TODAY = at('2026-11-30');
const u = (partial: Partial<Usage>): Usage => ({
  input_tokens: 0,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0,
  output_tokens: 0,
  ...partial,
});

describe('prompt-length bands (Haiku 5.5: A up to 100,000 prompt tokens, B above, for every token class)', () => {
  // prompt = input + cache write + cache read; 1,000 output tokens ride along in the same band.
  const request = (prompt: number) =>
    u({
      input_tokens: 100,
      cache_creation_input_tokens: 900,
      cache_read_input_tokens: prompt - 1_000,
      output_tokens: 1_000,
    });

  it('99,999 and 100,000 tokens are band A', () => {
    // A: 100 × 0.10 + 900 × 0.125 + 98,999 × 0.01 + 1,000 × 0.50 (per M) = 0.00001 + 0.0001125 + 0.00098999 + 0.0005
    expect(costUsd(request(99_999), 'claude-haiku-5-5', { at: TODAY })?.total).toBe(0.00161249);
    expect(costUsd(request(100_000), 'claude-haiku-5-5', { at: TODAY })?.total).toBe(0.0016125);
  });

  it('100,001 tokens is band B: every class, output included, at the B rates', () => {
    // B: 100 × 0.50 + 900 × 0.625 + 99,001 × 0.05 + 1,000 × 2.50 (per M)
    expect(costUsd(request(100_001), 'claude-haiku-5-5', { at: TODAY })).toEqual({
      input: 0.00005,
      cacheWrite5m: 0.0005625,
      cacheWrite1h: 0,
      cacheRead: 0.00495005,
      output: 0.0025,
      total: 0.00806255,
    });
  });
});

describe('effective-dated rows', () => {
  const read = u({ cache_read_input_tokens: 1_000_000 });

  it('Sonnet 5.5 reads at 0.1x until 2026-10-06 and at 0.05x from 2026-10-07', () => {
    expect(costUsd(read, 'claude-sonnet-5-5', { at: at('2026-10-06') })?.total).toBe(0.2);
    expect(costUsd(read, 'claude-sonnet-5-5', { at: at('2026-10-07') })?.total).toBe(0.1);
    // Before the first row: the earliest prices known.
    expect(costUsd(read, 'claude-sonnet-5-5', { at: at('2026-01-01') })?.total).toBe(0.2);
  });

  it('the ledger prices each request on its own date and names the catalogue date', () => {
    const ledger = new UsageLedger();
    ledger.record({
      forkId: 'p',
      kind: 'parent',
      turn: 0,
      model: 'claude-sonnet-5-5',
      usage: read,
      at: at('2026-10-06'),
    });
    ledger.record({
      forkId: 'p',
      kind: 'parent',
      turn: 1,
      model: 'claude-sonnet-5-5',
      usage: read,
      at: at('2026-10-08'),
    });
    const summary = ledger.summary();
    expect(summary.cost_usd.actual).toBeCloseTo(0.3, 12);
    expect(summary.model_table_date).toBe('2026-11-30');
  });
});

describe('modifiers the usage reports', () => {
  const base = u({ input_tokens: 1_000_000, cache_read_input_tokens: 1_000_000, output_tokens: 1_000_000 });
  // Opus 5.5: 4 in + 0.20 read + 20 out = 24.2 per million of each.

  it('batch halves every class, and stacks with caching', () => {
    expect(costUsd(base, 'claude-opus-5-5', { at: TODAY })?.total).toBe(24.2);
    expect(costUsd({ ...base, service_tier: 'batch' }, 'claude-opus-5-5', { at: TODAY })?.total).toBe(12.1);
  });

  it('inference_geo "us" is x1.1 on 4.6+ models, not on older ones; global changes nothing', () => {
    expect(costUsd({ ...base, inference_geo: 'us' }, 'claude-opus-5-5', { at: TODAY })?.total).toBe(26.62);
    expect(costUsd({ ...base, inference_geo: 'global' }, 'claude-opus-5-5', { at: TODAY })?.total).toBe(24.2);
    // Haiku 4.5: 1 + 0.1 + 5 = 6.1, no geography multiplier.
    expect(costUsd({ ...base, inference_geo: 'us' }, 'claude-haiku-4-5', { at: TODAY })?.total).toBe(6.1);
  });

  it('fast mode uses its own base rates (Opus 5.5 fast 8/40, reads keeping 0.05x); batch and geo stack on it', () => {
    expect(costUsd({ ...base, speed: 'fast' }, 'claude-opus-5-5', { at: TODAY })?.total).toBe(48.4);
    // 48.4 × 0.5 × 1.1, each class rounded to a nano-dollar once.
    expect(
      costUsd({ ...base, speed: 'fast', service_tier: 'batch', inference_geo: 'us' }, 'claude-opus-5-5', { at: TODAY })
        ?.total,
    ).toBe(26.62);
  });

  it('a Haiku 5.5 batch + us request keeps fractional nano-dollar rates exact per request', () => {
    // band A read 0.01/M = 10 nano, × 0.5 × 1.1 = 5.5 nano per token: 3 tokens = 16.5 → 17 (rounded once).
    expect(costUsd(u({ cache_read_input_tokens: 3 }), 'claude-haiku-5-5', { at: TODAY })?.total).toBe(0.00000003);
    expect(
      costUsd(
        { ...u({ cache_read_input_tokens: 3 }), service_tier: 'batch', inference_geo: 'us' },
        'claude-haiku-5-5',
        { at: TODAY },
      )?.total,
    ).toBe(0.000000017);
  });
});

describe('unpriced requests (an id the catalogue does not know)', () => {
  it('flow through totals and the summary as null, never NaN, with one warning', () => {
    const ledger = new UsageLedger({ defaultFreshInputTokens: 1_000 });
    const usage = u({ input_tokens: 10, cache_read_input_tokens: 5_000, output_tokens: 20 });
    ledger.record({ forkId: 'root', kind: 'parent', turn: 0, model: 'claude-opus-6', usage, at: TODAY });
    ledger.record({
      forkId: 'f1',
      parentId: 'root',
      kind: 'fork',
      turn: 0,
      model: 'claude-opus-6',
      usage,
      sharedPrefixTokens: 5_000,
      at: TODAY,
    });
    ledger.record({ forkId: 'f1', parentId: 'root', kind: 'fork', turn: 1, model: 'claude-opus-6', usage, at: TODAY });
    ledger.setStatus('f1', 'completed');
    const s = ledger.summary();
    expect(s.usage.cache_read_input_tokens).toBe(15_000);
    expect(s.cost_usd).toEqual({ actual: null, no_cache: null, fresh_agents: null, breakdown: null });
    expect(s.savings).toEqual({ vs_no_cache: null, vs_fresh_agents: null });
    expect(s.unpriced).toEqual({ requests: 3, models: ['claude-opus-6'] });
    expect(s.warnings).toHaveLength(1);
    expect(s.warnings[0]).toMatch(/"claude-opus-6" is not in forkcache's model catalogue/);
    expect(ledger.totals('f1').own.cost).toBeNull();
    expect(JSON.stringify(s)).not.toMatch(/NaN/);
  });

  it('a priced run has no unpriced requests and no warnings', () => {
    const ledger = new UsageLedger();
    ledger.record({
      forkId: 'root',
      kind: 'parent',
      turn: 0,
      model: 'claude-opus-5-5',
      usage: u({ input_tokens: 1 }),
      at: TODAY,
    });
    expect(ledger.summary()).toMatchObject({ unpriced: { requests: 0, models: [] }, warnings: [] });
  });
});
