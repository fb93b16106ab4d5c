import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BUILTIN_CATALOGUE, findModel, loadCatalogue, mergeCatalogue } from '../../../src/core/models/catalogue.ts';
import { DEFAULT_MODEL } from '../../../src/core/models/defaults.ts';
import { checkModel, statusAt } from '../../../src/core/models/status.ts';

const TODAY = Date.parse('2026-11-30T12:00:00Z');
const row = (extra: Record<string, unknown> = {}) => ({
  id: 'claude-new-6',
  prices: [{ effectiveFrom: '2026-12-01', inputPerMTok: 3, outputPerMTok: 15 }],
  ...extra,
});

function writeTable(json: unknown): string {
  const file = join(mkdtempSync(join(tmpdir(), 'fc-catalogue-')), 'models.json');
  writeFileSync(file, typeof json === 'string' ? json : JSON.stringify(json));
  return file;
}

describe('the built-in catalogue', () => {
  it('is dated, and its default model is a current row', () => {
    expect(BUILTIN_CATALOGUE.date).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    const entry = findModel(DEFAULT_MODEL);
    expect(entry?.id).toBe('claude-opus-5-5');
    expect(statusAt(entry!, TODAY)).toBe('current');
  });

  it('knows every current model of the price list with its corrected values', () => {
    const current = BUILTIN_CATALOGUE.models.filter((m) => statusAt(m, TODAY) === 'current').map((m) => m.id);
    expect(current).toEqual(
      expect.arrayContaining([
        'claude-opus-5-5',
        'claude-sonnet-5-5',
        'claude-haiku-5-5',
        'claude-fable-5-2',
        'claude-mythos-5-2',
      ]),
    );
    expect(findModel('claude-opus-5')?.minCacheableTokens).toBe(512);
    expect(findModel('claude-sonnet-4-5')?.contextWindow).toBe(200_000);
    expect(findModel('claude-sonnet-5')?.prices.at(-1)?.tiers[0]).toMatchObject({ inputPerMTok: 2, outputPerMTok: 10 });
    expect(findModel('claude-opus-5-5')?.constraints).toMatchObject({
      adaptiveThinkingOnly: true,
      forcedToolChoice: false,
    });
    expect(findModel('claude-haiku-5-5')?.constraints.prefill).toBe(false);
  });

  it('resolves dated aliases, -latest and dated suffixes; unknown ids are undefined, not errors', () => {
    expect(findModel('claude-sonnet-4-5-20250929')?.id).toBe('claude-sonnet-4-5');
    expect(findModel('claude-3-5-haiku-latest')?.id).toBe('claude-3-5-haiku');
    expect(findModel('claude-opus-4')?.id).toBe('claude-opus-4-0');
    expect(findModel('gpt-4o')).toBeUndefined();
  });
});

describe('model status at a date', () => {
  it('refuses a retired id before anything is sent, naming the replacement', () => {
    expect(() => checkModel('claude-opus-4-1', { at: TODAY, field: 'snapshot.model' })).toThrow(
      expect.objectContaining({
        code: 'MODEL_RETIRED',
        message: expect.stringMatching(/snapshot\.model: "claude-opus-4-1" was retired.*use claude-opus-5-5/),
      }),
    );
  });

  it('runs a deprecated id with one warning naming its end of life and replacement', () => {
    const check = checkModel('claude-opus-4-5', { at: TODAY });
    expect(check.status).toBe('deprecated');
    expect(check.warning).toMatch(
      /"claude-opus-4-5" is deprecated: its end of life is 2027-01-22; use claude-opus-5-5/,
    );
  });

  it('a deprecated model is retired from its end-of-life date on', () => {
    const sonnet45 = findModel('claude-sonnet-4-5')!;
    expect(statusAt(sonnet45, Date.parse('2026-11-29T23:59:59Z'))).toBe('deprecated');
    expect(statusAt(sonnet45, Date.parse('2026-11-30T00:00:00Z'))).toBe('retired');
    expect(() => checkModel('claude-sonnet-4-5-20250929', { at: TODAY })).toThrow(/use claude-sonnet-5-5/);
  });

  it('never refuses an unknown id: it runs unpriced, with a hint how to price it', () => {
    const check = checkModel('claude-opus-6', { at: TODAY });
    expect(check).toMatchObject({ status: 'unknown', entry: undefined });
    expect(check.warning).toMatch(
      /not in forkcache's model catalogue \(2026-11-30\).*cost is not priced \(null\).*--model-table FILE/,
    );
  });
});

describe('a user catalogue merged over the built-in one', () => {
  it('adds new ids, replaces rows by id, and carries its own date', () => {
    const merged = loadCatalogue(
      writeTable({
        date: '2026-12-15',
        models: [
          row(),
          {
            id: 'claude-opus-5-5',
            prices: [{ effectiveFrom: '2026-12-10', inputPerMTok: 3, outputPerMTok: 15, cacheReadMultiplier: 0.04 }],
          },
        ],
      }),
    );
    expect(merged.date).toBe('2026-12-15');
    expect(findModel('claude-new-6', merged)?.prices[0]?.tiers[0]).toMatchObject({
      cacheWrite5mPerMTok: 3.75,
      cacheWrite1hPerMTok: 6,
      cacheReadPerMTok: 0.3,
    });
    expect(findModel('claude-opus-5-5', merged)?.prices[0]?.tiers[0]?.cacheReadPerMTok).toBeCloseTo(0.12, 12);
    expect(merged.models.length).toBe(BUILTIN_CATALOGUE.models.length + 1);
    expect(mergeCatalogue({ date: '2026-12-15', replace: true, models: [row()] }).models.map((m) => m.id)).toEqual([
      'claude-new-6',
    ]);
  });

  it('names the row and field of every bad value', () => {
    const bad = (models: unknown[]) => () => mergeCatalogue({ date: '2026-12-01', models }, 'model table t.json');
    expect(bad([row({ prices: [{ effectiveFrom: '2026-12-01', inputPerMTok: -1, outputPerMTok: 1 }] })])).toThrow(
      expect.objectContaining({
        code: 'MODEL_CATALOGUE_INVALID',
        message: expect.stringMatching(/model table t\.json: models\[0\] \(claude-new-6\)\.prices\[0\]/),
      }),
    );
    expect(bad([row({ status: 'deprecated' })])).toThrow(
      /models\[0\] \(claude-new-6\): a deprecated model needs endOfLife and replacement/,
    );
    expect(bad([row({ status: 'retired', replacement: 'claude-none' })])).toThrow(
      /claude-new-6\.replacement: "claude-none" is not in the catalogue/,
    );
    expect(
      bad([
        row({
          prices: [
            { effectiveFrom: '2026-12-02', inputPerMTok: 1, outputPerMTok: 1 },
            { effectiveFrom: '2026-12-01', inputPerMTok: 1, outputPerMTok: 1 },
          ],
        }),
      ]),
    ).toThrow(/prices\[1\]\.effectiveFrom: 2026-12-01 must come after 2026-12-02/);
    expect(bad([row({ prices: [{ effectiveFrom: 'soon', inputPerMTok: 1, outputPerMTok: 1 }] })])).toThrow(
      /expected a date YYYY-MM-DD/,
    );
    expect(bad([row(), row()])).toThrow(/model "claude-new-6" is named twice/);
    const tiers = [
      { name: 'A', inputPerMTok: 1, outputPerMTok: 1 },
      { name: 'B', inputPerMTok: 2, outputPerMTok: 2 },
    ];
    expect(bad([row({ prices: [{ effectiveFrom: '2026-12-01', bands: { counts: ['input'], tiers } }] })])).toThrow(
      /tiers\[0\]\.upToPromptTokens: required on every tier but the last/,
    );
    expect(bad([row({ prizes: [] })])).toThrow(/models\[0\] \(claude-new-6\)/);
  });

  it('reports an unreadable or malformed file with its path', () => {
    expect(() => loadCatalogue(join(tmpdir(), 'fc-no-such-dir', 'models.json'))).toThrow(
      /model table .*models\.json: cannot read \(no such file\)/,
    );
    expect(() => loadCatalogue(writeTable('{ nope'))).toThrow(
      expect.objectContaining({ code: 'MODEL_CATALOGUE_INVALID', message: expect.stringMatching(/not valid JSON/) }),
    );
  });
});
