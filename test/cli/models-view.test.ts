import { describe, expect, it } from 'vitest';
import { formatApi, formatModels, price } from '../../src/cli/models/table.ts';
import { apiView, catalogueView } from '../../src/cli/models/view.ts';
import { BUILTIN_CATALOGUE, mergeCatalogue } from '../../src/core/models/catalogue.ts';

const day = (d: string): number => Date.parse(`${d}T00:00:00Z`);
const text = (d: string, all = false): string =>
  formatModels(catalogueView(BUILTIN_CATALOGUE, day(d), all), 'built in');

describe('forkcache models: the table', () => {
  it('shows prices, read multiplier, minimum and context of the row in force, each band on its own line', () => {
    const out = text('2026-11-30');
    expect(out).toMatch(
      /^Model catalogue of 2026-11-30 \(built in\): status and prices on 2026-11-30, USD per million tokens$/m,
    );
    expect(out).toMatch(/^claude-opus-5-5 +current +4 \/ 20 +5 +8 +0\.20 +0\.05x +512 +1M \/ 128K$/m);
    expect(out).toMatch(/^claude-fable-5-2 +current +8 \/ 40 +10 +16 +0\.20 +0\.025x /m);
    expect(out).toMatch(
      /^claude-haiku-5-5 +current +A ≤100,000: 0\.10 \/ 0\.50 +0\.125 +0\.20 +0\.01 +0\.1x +512 +1M \/ 128K$/m,
    );
    expect(out).toMatch(/^ +B >100,000: 0\.50 \/ 2\.50 +0\.625 +1 +0\.05 +0\.1x$/m);
    expect(out).toMatch(
      /^claude-opus-4-5 +deprecated +5 \/ 25 +6\.25 +10 +0\.50 +0\.1x +4,096 +200K \/ 64K\n {2}also claude-opus-4-5-20251101\n {2}end of life 2027-01-22; use claude-opus-5-5 instead$/m,
    );
    // Sonnet 4.5's end of life is 2026-11-30: retired that day, so hidden.
    expect(out).not.toMatch(/^claude-sonnet-4-5 /m);
    expect(out).not.toMatch(/^claude-opus-4-1 /m);
    expect(out).toContain('23 models; 9 retired hidden (--retired shows them)');
  });

  it('takes status and prices at the date: the row in force then, a deprecated model before its end of life', () => {
    const october = text('2026-10-01');
    expect(october).toMatch(/^claude-sonnet-5-5 +current +2 \/ 10 +2\.50 +4 +0\.20 +0\.1x /m);
    expect(october).toMatch(
      /^claude-sonnet-4-5 +deprecated .*\n.*\n {2}end of life 2026-11-30; use claude-sonnet-5-5 instead$/m,
    );
    expect(text('2026-10-07')).toMatch(/^claude-sonnet-5-5 +current +2 \/ 10 +2\.50 +4 +0\.10 +0\.05x /m);
  });

  it('lists only the models that existed on the date: a model first priced later is hidden, and counted', () => {
    const september = catalogueView(BUILTIN_CATALOGUE, day('2026-09-25'), false);
    const ids = september.models.map((m) => m.id);
    expect(ids).toContain('claude-opus-4-8'); // first priced 2026-09-22
    expect(ids).not.toContain('claude-sonnet-5-5'); // first priced 2026-09-28
    expect(ids).not.toContain('claude-fable-5-2'); // first priced 2026-11-09
    expect(september.hidden_later).toBe(5); // opus, sonnet and haiku 5.5, fable and mythos 5.2
    expect(formatModels(september, 'built in')).toContain(
      '5 not priced until after 2026-09-25 hidden (they did not exist yet)',
    );
    expect(catalogueView(BUILTIN_CATALOGUE, day('2026-11-30'), false).hidden_later).toBe(0);
  });

  it('with all, shows retired models without prices, with their replacement', () => {
    const out = text('2026-11-30', true);
    expect(out).toMatch(/^claude-opus-4-1 +retired +- +- +- +- +- /m);
    expect(out).toMatch(
      /^claude-opus-4-1 .*\n {2}also claude-opus-4-1-20250805\n {2}retired: requests fail; use claude-opus-5-5 instead$/m,
    );
    expect(out).toMatch(/^ {2}retired on 2026-11-30: requests fail; use claude-sonnet-5-5 instead$/m);
    expect(out).toContain('32 models.');
    // every price names where it comes from and the date of that copy
    expect(out).toMatch(/^Prices from Anthropic's pricing page \(a stored copy\), retrieved 2026-11-09: claude-/m);
  });

  it('prints prices to the cent at least, without losing digits', () => {
    expect([8, 0.2, 0.125, 12.5, 0.01, 0.0375].map(price)).toEqual(['8', '0.20', '0.125', '12.50', '0.01', '0.0375']);
  });
});

describe('forkcache models: the JSON view', () => {
  it('carries, per model, the row in force, read multiplier and bands', () => {
    const view = catalogueView(BUILTIN_CATALOGUE, day('2026-11-30'), false);
    const models = new Map(view.models.map((m) => [m.id, m]));
    expect(view).toMatchObject({ date: '2026-11-30', as_of: '2026-11-30', hidden_retired: 9 });
    expect(models.get('claude-opus-5-5')).toEqual({
      id: 'claude-opus-5-5',
      aliases: [],
      status: 'current',
      end_of_life: null,
      replacement: null,
      prices: {
        effective_from: '2026-10-07',
        input_per_mtok: 4,
        output_per_mtok: 20,
        cache_write_5m_per_mtok: 5,
        cache_write_1h_per_mtok: 8,
        cache_read_per_mtok: 0.2,
        fast: {
          input_per_mtok: 8,
          output_per_mtok: 40,
          cache_write_5m_per_mtok: 10,
          cache_write_1h_per_mtok: 16,
          cache_read_per_mtok: 0.4,
        },
      },
      read_multiplier: 0.05,
      bands: null,
      min_cacheable_tokens: 512,
      context_window: 1_000_000,
      max_output_tokens: 128_000,
      price_source: { name: "Anthropic's pricing page (a stored copy)", retrieved: '2026-11-09', third_party: false },
      note: "the documentation's recommended default",
    });
    expect(
      models
        .get('claude-haiku-5-5')
        ?.bands?.map((b) => [b.name, b.up_to_prompt_tokens, b.input_per_mtok, b.read_multiplier]),
    ).toEqual([
      ['A', 100_000, 0.1, 0.1],
      ['B', null, 0.5, 0.1],
    ]);
    expect(models.get('claude-sonnet-5-5')?.prices?.effective_from).toBe('2026-10-07');
    expect(
      catalogueView(BUILTIN_CATALOGUE, day('2026-10-06'), false).models.find((m) => m.id === 'claude-sonnet-5-5'),
    ).toMatchObject({ read_multiplier: 0.1, prices: { effective_from: '2026-09-28' } });
  });
});

describe('forkcache models: beside an endpoint', () => {
  const catalogue = mergeCatalogue({
    date: '2026-11-30',
    models: [{ id: 'claude-local-1', prices: [{ effectiveFrom: '2026-11-30', inputPerMTok: 1, outputPerMTok: 2 }] }],
  });
  const current = catalogue.models.filter(
    (m) => m.prices.length > 0 && m.id !== 'claude-local-1' && m.id !== 'claude-sonnet-4-5',
  );
  const listed = [
    ...current.map((m) => ({ id: m.id, display_name: m.id, lifecycle: 'active' })),
    { id: 'claude-opus-6', display_name: 'Claude Opus 6', lifecycle: 'active' },
    { id: 'claude-haiku-4-5-20251001' },
    { id: 'claude-opus-4-1' },
  ];

  it('marks ids it cannot price, aliases priced as their model, retired ids, and catalogue ids not listed', () => {
    const view = apiView('http://127.0.0.1:1', listed, catalogue, day('2026-11-30'));
    const marks = new Map(view.models.map((m) => [m.id, [m.mark, m.catalogue_id]]));
    expect(marks.get('claude-opus-6')).toEqual(['unpriced', null]);
    expect(marks.get('claude-opus-5-5')).toEqual(['priced', 'claude-opus-5-5']);
    expect(marks.get('claude-haiku-4-5-20251001')).toEqual(['priced', 'claude-haiku-4-5']);
    expect(marks.get('claude-opus-4-1')).toEqual(['retired', 'claude-opus-4-1']);
    expect(view.not_listed).toEqual(['claude-local-1']);
    const out = formatApi(view);
    expect(out).toContain(`GET /v1/models at http://127.0.0.1:1: ${listed.length} models`);
    expect(out).toMatch(/^claude-opus-6 +active +unpriced: not in the catalogue$/m);
    expect(out).toMatch(/^claude-haiku-4-5-20251001 +- +priced as claude-haiku-4-5$/m);
    expect(out).toMatch(/^claude-opus-4-1 +- +retired in the catalogue \(claude-opus-4-1\)$/m);
    expect(out).toContain('Catalogue models the endpoint does not list: claude-local-1');
  });
});
