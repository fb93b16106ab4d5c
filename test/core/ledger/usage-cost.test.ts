import type Anthropic from '@anthropic-ai/sdk';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { costNano, costUsd } from '../../../src/core/ledger/cost.ts';
import { findModel } from '../../../src/core/models/catalogue.ts';
import { addUsage, normalizeUsage, sumUsage, type Usage } from '../../../src/core/ledger/usage.ts';

const sonnet = findModel('claude-sonnet-4-6')!;
const AT = Date.parse('2026-11-30T12:00:00Z');

function usage(partial: Partial<Usage>): Usage {
  return { input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 0, ...partial };
}

describe('normalizeUsage', () => {
  it("accepts the SDK's Anthropic.Usage with null counters as zeros and drops unrelated fields", () => {
    const sdk: Anthropic.Usage = {
      input_tokens: 12,
      output_tokens: 7,
      cache_creation_input_tokens: null,
      cache_read_input_tokens: null,
      cache_creation: null,
      inference_geo: null,
      output_tokens_details: null,
      server_tool_use: null,
      service_tier: 'standard',
      speed: null,
    };
    expect(normalizeUsage(sdk)).toEqual({
      input_tokens: 12,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      output_tokens: 7,
    });
  });

  it('keeps a TTL split that sums to the creation total', () => {
    const u = normalizeUsage({
      input_tokens: 1,
      cache_creation_input_tokens: 30,
      cache_creation: { ephemeral_5m_input_tokens: 10, ephemeral_1h_input_tokens: 20 },
    });
    expect(u.cache_creation).toEqual({ ephemeral_5m_input_tokens: 10, ephemeral_1h_input_tokens: 20 });
  });

  it('drops an all-zero split next to a non-zero total (no breakdown: billed as 5m)', () => {
    const u = normalizeUsage({
      cache_creation_input_tokens: 30,
      cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
    });
    expect(u.cache_creation).toBeUndefined();
    expect(u.cache_creation_input_tokens).toBe(30);
  });

  it('names the field for negative, fractional and inconsistent counters', () => {
    expect(() => normalizeUsage({ input_tokens: -1 })).toThrow(/usage\.input_tokens: .*>=0/);
    expect(() => normalizeUsage({ output_tokens: 1.5 })).toThrow(/usage\.output_tokens/);
    expect(() =>
      normalizeUsage({
        cache_creation_input_tokens: 30,
        cache_creation: { ephemeral_5m_input_tokens: 10, ephemeral_1h_input_tokens: 5 },
      }),
    ).toThrow(
      expect.objectContaining({
        code: 'LEDGER_INVALID_USAGE',
        message: expect.stringMatching(/usage\.cache_creation: .*\(15\) must equal cache_creation_input_tokens \(30\)/),
      }),
    );
  });
});

describe('costUsd (hand-computed, Sonnet 4.6: $3 in, $3.75 5m write, $6 1h write, $0.30 read, $15 out per MTok)', () => {
  it('1,000,000 cache-read tokens cost exactly $0.30', () => {
    const cost = costUsd(usage({ cache_read_input_tokens: 1_000_000 }), 'claude-sonnet-4-6', { at: AT });
    expect(cost).toEqual({ input: 0, cacheWrite5m: 0, cacheWrite1h: 0, cacheRead: 0.3, output: 0, total: 0.3 });
  });

  it('prices every component and sums them without float noise', () => {
    // 1,000 in × $3/M = $0.003; 2,000 5m writes × $3.75/M = $0.0075; 10,000 reads × $0.30/M
    // = $0.003; 500 out × $15/M = $0.0075. Total $0.021 (0.003 + 0.0075 + ... in floats is not).
    const cost = costUsd(
      usage({
        input_tokens: 1_000,
        cache_creation_input_tokens: 2_000,
        cache_read_input_tokens: 10_000,
        output_tokens: 500,
      }),
      'claude-sonnet-4-6',
      { at: AT },
    );
    expect(cost).toEqual({
      input: 0.003,
      cacheWrite5m: 0.0075,
      cacheWrite1h: 0,
      cacheRead: 0.003,
      output: 0.0075,
      total: 0.021,
    });
  });

  it('bills a mixed 5m/1h split at 1.25x and 2x', () => {
    // 3,000 written: 1,000 as 5m × $3.75/M = $0.00375, 2,000 as 1h × $6/M = $0.012 → $0.01575.
    const split = usage({
      cache_creation_input_tokens: 3_000,
      cache_creation: { ephemeral_5m_input_tokens: 1_000, ephemeral_1h_input_tokens: 2_000 },
    });
    expect(costUsd(split, 'claude-sonnet-4-6', { at: AT })).toMatchObject({
      cacheWrite5m: 0.00375,
      cacheWrite1h: 0.012,
      total: 0.01575,
    });
    // Without the split all 3,000 are 5m writes: 3,000 × $3.75/M = $0.01125.
    expect(costUsd(usage({ cache_creation_input_tokens: 3_000 }), 'claude-sonnet-4-6', { at: AT })).toMatchObject({
      cacheWrite5m: 0.01125,
      cacheWrite1h: 0,
      total: 0.01125,
    });
  });

  it('handles fractional prices (Haiku 5.5 band A: $0.10 in, $0.01 read, $0.50 out)', () => {
    // 10,000 in × $0.10/M + 50,000 reads × $0.01/M + 1,000 out × $0.50/M = 0.001 + 0.0005 + 0.0005.
    const cost = costUsd(
      usage({ input_tokens: 10_000, cache_read_input_tokens: 50_000, output_tokens: 1_000 }),
      'claude-haiku-5-5',
      { at: AT },
    );
    expect(cost?.total).toBe(0.002);
    // A dated alias prices as its model: Haiku 4.5, 100,000 1h writes × $2/M = $0.20.
    expect(
      costUsd(
        usage({
          cache_creation_input_tokens: 100_000,
          cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 100_000 },
        }),
        'claude-haiku-4-5-20251001',
        { at: AT },
      )?.total,
    ).toBe(0.2);
  });

  it('is null (unpriced), not an error, for a model the catalogue does not know or cannot price', () => {
    expect(costUsd(usage({ input_tokens: 5 }), 'claude-nope', { at: AT })).toBeNull();
    expect(costUsd(usage({ input_tokens: 5 }), 'claude-opus-4-1', { at: AT })).toBeNull();
  });
});

describe('addUsage', () => {
  const counter = fc.nat({ max: 5_000_000 });
  const arbUsage = fc
    .record({ i: counter, c5: counter, c1: counter, r: counter, o: counter, split: fc.boolean() })
    .map(({ i, c5, c1, r, o, split }) =>
      split
        ? usage({
            input_tokens: i,
            cache_creation_input_tokens: c5 + c1,
            cache_read_input_tokens: r,
            output_tokens: o,
            cache_creation: { ephemeral_5m_input_tokens: c5, ephemeral_1h_input_tokens: c1 },
          })
        : usage({ input_tokens: i, cache_creation_input_tokens: c5, cache_read_input_tokens: r, output_tokens: o }),
    );

  it('keeps cost additive: cost(a + b) = cost(a) + cost(b), exactly, with or without splits', () => {
    fc.assert(
      fc.property(arbUsage, arbUsage, (a, b) => {
        expect(costNano(addUsage(a, b), sonnet, AT).total).toBe(
          costNano(a, sonnet, AT).total + costNano(b, sonnet, AT).total,
        );
      }),
    );
  });

  it('sums counters and splits (a side without a split counts as 5m)', () => {
    const a = usage({ input_tokens: 1, cache_creation_input_tokens: 10, output_tokens: 2 });
    const b = usage({
      cache_creation_input_tokens: 5,
      cache_read_input_tokens: 7,
      cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 5 },
    });
    expect(sumUsage([a, b])).toEqual({
      input_tokens: 1,
      cache_creation_input_tokens: 15,
      cache_read_input_tokens: 7,
      output_tokens: 2,
      cache_creation: { ephemeral_5m_input_tokens: 10, ephemeral_1h_input_tokens: 5 },
    });
    expect(sumUsage([])).toEqual(usage({}));
  });
});
