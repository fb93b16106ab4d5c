import { describe, expect, it } from 'vitest';
import { BUILTIN_CATALOGUE, findModel, mergeCatalogue } from '../../../src/core/models/catalogue.ts';
import { assertPricedOn, pricedOn } from '../../../src/core/models/pricing.ts';

// Issue 25: prices and multipliers bounded and finite, dates real calendar days, a partial
// user row merged over the built-in row instead of silently replacing its other fields.
const merge = (models: unknown[], date = '2026-12-01') => mergeCatalogue({ date, models }, 'model table t.json');
const priced = (price: Record<string, unknown>) => ({
  id: 'claude-new-6',
  prices: [{ effectiveFrom: '2026-12-01', inputPerMTok: 3, outputPerMTok: 15, ...price }],
});

describe('catalogue values a cost can be computed from', () => {
  it('refuses a price or a multiplier out of range, naming the row, the field and the value', () => {
    expect(() => merge([priced({ inputPerMTok: 1e308 })])).toThrow(
      expect.objectContaining({
        code: 'MODEL_CATALOGUE_INVALID',
        message:
          'model table t.json: models[0] (claude-new-6).prices[0].inputPerMTok: expected a price of at most 10000 USD per million tokens (got 1e+308)',
      }),
    );
    expect(() => merge([priced({ cacheReadMultiplier: 1e300 })])).toThrow(
      /models\[0\] \(claude-new-6\)\.prices\[0\]\.cacheReadMultiplier: expected a multiplier of at most 10 \(got 1e\+300\)/,
    );
    expect(() =>
      mergeCatalogue({ date: '2026-12-01', modifiers: { batchMultiplier: 2 }, models: [] }, 'model table t.json'),
    ).toThrow(/modifiers\.batchMultiplier: expected a multiplier of at most 1 \(the batch API is a discount\)/);
    // the largest accepted values still price a 1M-token request exactly
    const top = merge([priced({ inputPerMTok: 10_000, cacheWrite5mMultiplier: 10 })]);
    expect(findModel('claude-new-6', top)?.prices[0]?.tiers[0]?.cacheWrite5mPerMTok).toBe(100_000);
  });

  it('refuses dates that are not calendar days, wherever they appear', () => {
    expect(() => merge([], '2026-13-45')).toThrow(/t\.json: date: not a calendar date \(got "2026-13-45"\)/);
    expect(() => merge([priced({ effectiveFrom: '2026-02-31' })])).toThrow(
      /models\[0\] \(claude-new-6\)\.prices\[0\]\.effectiveFrom: not a calendar date \(got "2026-02-31"\)/,
    );
    expect(() =>
      merge([{ ...priced({}), status: 'deprecated', endOfLife: '2027-02-29', replacement: 'claude-opus-5-5' }]),
    ).toThrow(/models\[0\] \(claude-new-6\)\.endOfLife: not a calendar date \(got "2027-02-29"\)/);
    expect(merge([priced({ effectiveFrom: '2028-02-29' })]).date).toBe('2026-12-01'); // a leap day is a day
  });
});

describe('a user row for a built-in id', () => {
  const builtin = findModel('claude-haiku-4-5')!;

  it('with only prices keeps the built-in minimum, context window, aliases and constraints', () => {
    const merged = merge([
      { id: 'claude-haiku-4-5', prices: [{ effectiveFrom: '2026-12-01', inputPerMTok: 0.8, outputPerMTok: 4 }] },
    ]);
    const entry = findModel('claude-haiku-4-5-20251001', merged)!;
    expect(entry).toMatchObject({
      id: 'claude-haiku-4-5',
      minCacheableTokens: builtin.minCacheableTokens,
      contextWindow: builtin.contextWindow,
      maxOutputTokens: builtin.maxOutputTokens,
      aliases: builtin.aliases,
      inferenceGeo: false,
      constraints: builtin.constraints,
    });
    expect(builtin.minCacheableTokens).toBe(4096); // not the 1024 default a replaced row would get
    expect(entry.prices[0]?.tiers[0]?.inputPerMTok).toBe(0.8);
    // the new prices are the user file's, not the built-in page's
    expect(entry.source).toEqual({ name: 'model table t.json', retrieved: '2026-12-01', thirdParty: false });
    expect(findModel('claude-haiku-4-5')?.source).toMatchObject({ retrieved: '2026-11-09' });
  });

  it('merges constraints key by key and keeps the built-in source when it gives no prices', () => {
    const merged = merge([{ id: 'claude-opus-5-5', constraints: { prefill: false }, minCacheableTokens: 2048 }]);
    const entry = findModel('claude-opus-5-5', merged)!;
    expect(entry.constraints).toEqual({ ...findModel('claude-opus-5-5')!.constraints, prefill: false });
    expect(entry.minCacheableTokens).toBe(2048);
    expect(entry.prices).toEqual(findModel('claude-opus-5-5')!.prices);
    expect(entry.source).toEqual(findModel('claude-opus-5-5')!.source);
  });

  it('is checked merged, and an error says so', () => {
    expect(() => merge([{ id: 'claude-opus-4-5', status: 'deprecated' }])).not.toThrow(); // endOfLife is built in
    expect(() => merge([{ id: 'claude-opus-5-5', status: 'deprecated' }])).toThrow(
      /models\[0\] \(claude-opus-5-5\), merged over the built-in row: a deprecated model needs endOfLife and replacement/,
    );
  });

  it('replace: true drops the built-in rows, so nothing is merged', () => {
    const replaced = mergeCatalogue({
      date: '2026-12-01',
      replace: true,
      models: [
        { id: 'claude-haiku-4-5', prices: [{ effectiveFrom: '2026-12-01', inputPerMTok: 1, outputPerMTok: 5 }] },
      ],
    });
    expect(findModel('claude-haiku-4-5', replaced)?.minCacheableTokens).toBe(1024);
  });
});

describe('prices and dates', () => {
  it('every priced built-in row names its source and retrieval date; third-party copies say so', () => {
    for (const m of BUILTIN_CATALOGUE.models.filter((e) => e.prices.length > 0)) {
      expect(m.source.retrieved).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      expect(m.source.thirdParty).toBe(m.provider !== 'anthropic');
    }
  });

  it("a date before a model's first price row is refused, naming the first date", () => {
    const sonnet = findModel('claude-sonnet-5-5')!;
    expect(pricedOn(sonnet, Date.parse('2026-09-27T23:00:00Z'))).toBe(false);
    expect(pricedOn(sonnet, Date.parse('2026-09-28T00:00:00Z'))).toBe(true);
    expect(() => assertPricedOn(sonnet, Date.parse('2026-09-01T00:00:00Z'), '--date')).toThrow(
      expect.objectContaining({
        code: 'INVALID_OPTION',
        message:
          '--date: 2026-09-01 is before the first price of claude-sonnet-5-5 in the catalogue (2026-09-28); use a date from 2026-09-28 on',
      }),
    );
  });
});
