import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_MODEL_TABLE, findModel, loadModelTable, requireModel } from '../src/ledger/models.ts';

describe('model table', () => {
  it('resolves dated snapshots and -latest aliases to the canonical entry', () => {
    expect(findModel('claude-sonnet-4-5-20250929')?.id).toBe('claude-sonnet-4-5');
    expect(findModel('claude-3-5-haiku-latest')?.minCacheableTokens).toBe(2048);
    expect(findModel('claude-haiku-4-5')?.minCacheableTokens).toBe(4096);
    expect(findModel('gpt-4o')).toBeUndefined();
  });

  it('names the field and the known models for an unknown model', () => {
    expect(() => requireModel('claude-nope', DEFAULT_MODEL_TABLE, 'plan.model')).toThrow(/plan\.model: unknown model "claude-nope" \(known: claude-opus-5/);
  });

  it('merges a user override file by id and validates it with paths', () => {
    const dir = mkdtempSync(join(tmpdir(), 'fc-models-'));
    const file = join(dir, 'models.json');
    writeFileSync(file, JSON.stringify({ date: '2027-01-01', models: [{ id: 'claude-sonnet-5', family: 'sonnet-5', inputPerMTok: 3, outputPerMTok: 15, minCacheableTokens: 512 }] }));
    const table = loadModelTable(file);
    expect(table.date).toBe('2027-01-01');
    expect(findModel('claude-sonnet-5', table)).toMatchObject({ inputPerMTok: 3, cacheReadMultiplier: 0.1, minCacheableTokens: 512 });
    expect(table.models.length).toBe(DEFAULT_MODEL_TABLE.models.length);

    writeFileSync(file, JSON.stringify({ date: 'x', models: [{ id: 'a', family: 'f', inputPerMTok: -1, outputPerMTok: 1, minCacheableTokens: 1 }] }));
    expect(() => loadModelTable(file)).toThrow(/models\[0\]\.inputPerMTok/);
  });
});
