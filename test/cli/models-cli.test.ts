import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/util/clock.ts';
import type { ApiView, ModelView } from '../../src/cli/models/view.ts';
import { mergeCatalogue } from '../../src/core/models/catalogue.ts';
import { emulator } from '../integrations/emulator/helpers.ts';
import { forkcache } from './run-cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'forkcache-models-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A model table file in the temp directory. */
function table(name: string, json: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, typeof json === 'string' ? json : JSON.stringify(json));
  return path;
}

// No key and no base URL unless a test sets them: the command must not reach any real endpoint.
const HERMETIC = { ANTHROPIC_API_KEY: undefined, ANTHROPIC_BASE_URL: undefined };
const run = (args: string[], env: Record<string, string | undefined> = {}) =>
  forkcache(['models', ...args], { ...HERMETIC, ...env });

interface ModelsJson {
  date: string;
  as_of: string;
  models: ModelView[];
  api?: ApiView;
}

async function json(args: string[], env: Record<string, string | undefined> = {}): Promise<ModelsJson> {
  const out = await run([...args, '--json'], env);
  expect(out.stderr).toBe('');
  expect(out.code).toBe(0);
  return JSON.parse(out.stdout) as ModelsJson;
}

const byId = (out: ModelsJson) => new Map(out.models.map((m) => [m.id, m]));

describe('forkcache models (child process)', () => {
  // The table and JSON details are tested in-process (models-view.test.ts); these runs check
  // the command as a user runs it: flags, files, output streams and exit codes.
  it('prints the catalogue as a table, with the footer on unknown ids and --model-table', async () => {
    const out = await run(['--date', '2026-11-30']);
    expect(out.stderr).toBe('');
    expect(out.code).toBe(0);
    expect(out.stdout).toMatch(
      /^Model catalogue of 2026-11-30 \(built in\): status and prices on 2026-11-30, USD per million tokens$/m,
    );
    expect(out.stdout).toMatch(/^claude-opus-5-5 +current +4 \/ 20 +5 +8 +0\.20 +0\.05x +512 +1M \/ 128K$/m);
    expect(out.stdout).toMatch(/^ +B >100,000: 0\.50 \/ 2\.50 +0\.625 +1 +0\.05 +0\.1x$/m);
    expect(out.stdout).not.toMatch(/^claude-sonnet-4-5 /m);
    expect(out.stdout).toContain('Ids not in the catalogue still run, unpriced (cost null)');
    expect(out.stdout).toContain('--model-table FILE');
  });

  it('--json --retired: one object, retired models included without prices', async () => {
    const out = await json(['--date', '2026-11-30', '--retired']);
    expect(out).toMatchObject({ date: '2026-11-30', as_of: '2026-11-30' });
    const models = byId(out);
    expect(models.get('claude-opus-5-5')).toMatchObject({
      status: 'current',
      read_multiplier: 0.05,
      prices: { effective_from: '2026-10-07', input_per_mtok: 4 },
    });
    expect(models.get('claude-sonnet-4-5')).toMatchObject({
      status: 'retired',
      prices: null,
      read_multiplier: null,
      replacement: 'claude-sonnet-5-5',
    });
    expect(models.get('claude-opus-4-1')).toMatchObject({ status: 'retired', replacement: 'claude-opus-5-5' });
  });

  it("--model-table merges a file over the built-in catalogue, at today's date without --date", async () => {
    const file = table('extra.json', {
      date: '2026-12-01',
      models: [
        {
          id: 'claude-local-1',
          prices: [{ effectiveFrom: '2026-12-01', inputPerMTok: 1, outputPerMTok: 2, cacheReadMultiplier: 0.05 }],
        },
        {
          id: 'claude-opus-5-5',
          minCacheableTokens: 1024,
          prices: [{ effectiveFrom: '2026-10-07', inputPerMTok: 3, outputPerMTok: 15 }],
        },
      ],
    });
    const before = new Date().toISOString().slice(0, 10);
    const out = await json(['--model-table', file]);
    const after = new Date().toISOString().slice(0, 10);
    expect([before, after]).toContain(out.as_of);
    expect(out.date).toBe('2026-12-01');
    const models = byId(out);
    expect(models.get('claude-local-1')).toMatchObject({
      status: 'current',
      read_multiplier: 0.05,
      prices: { input_per_mtok: 1, cache_read_per_mtok: 0.05, cache_write_5m_per_mtok: 1.25 },
    });
    expect(models.get('claude-opus-5-5')).toMatchObject({
      min_cacheable_tokens: 1024,
      read_multiplier: 0.1,
      prices: { input_per_mtok: 3 },
    });
    expect(models.get('claude-fable-5-2')).toMatchObject({ read_multiplier: 0.025 });
  });

  it('exits 2 naming the flag, the file or the field on a bad flag or table', async () => {
    const date = await run(['--date', '2026-02-30']);
    expect(date.code).toBe(2);
    expect(date.stderr).toContain('--date: not a calendar date (got "2026-02-30")');
    const missing = await run(['--model-table', join(dir, 'nope.json')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`model table ${join(dir, 'nope.json')}: cannot read (no such file)`);
    const badRow = table('bad-row.json', {
      date: '2026-12-01',
      models: [{ id: 'claude-x', prices: [{ effectiveFrom: '2026-12-01', outputPerMTok: 2 }] }],
    });
    const row = await run(['--model-table', badRow]);
    expect(row.code).toBe(2);
    expect(row.stderr).toContain(`model table ${badRow}: models[0] (claude-x).prices[0]`);
    expect(row.stdout).toBe('');
  });
});

describe('forkcache models --from-api anthropic (child process, emulator on 127.0.0.1)', () => {
  // The endpoint knows claude-opus-6, which the CLI's catalogue lacks; the CLI's table has a
  // claude-local-1 the endpoint does not serve.
  const serverTable = mergeCatalogue({
    date: '2026-11-30',
    models: [{ id: 'claude-opus-6', prices: [{ effectiveFrom: '2026-11-30', inputPerMTok: 4, outputPerMTok: 20 }] }],
  });
  const cliTable = () =>
    table('local.json', {
      date: '2026-11-30',
      models: [{ id: 'claude-local-1', prices: [{ effectiveFrom: '2026-11-30', inputPerMTok: 1, outputPerMTok: 2 }] }],
    });

  it('lists what GET /v1/models returns, marks the ids it cannot price and the catalogue ids not listed', async () => {
    const emu = await emulator({
      modelTable: serverTable,
      clock: new ManualClock(Date.parse('2026-11-30T12:00:00Z')),
      apiKey: 'sk-test',
    });
    const env = { ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: emu.url };
    const local = cliTable();
    const out = await json(['--from-api', 'anthropic', '--model-table', local, '--date', '2026-11-30'], env);
    const api = out.api!;
    expect(api.base_url).toBe(emu.url);
    const marks = new Map(api.models.map((m) => [m.id, m]));
    expect(marks.get('claude-opus-6')).toEqual({
      id: 'claude-opus-6',
      display_name: 'Claude Opus 6',
      lifecycle: 'active',
      catalogue_id: null,
      mark: 'unpriced',
    });
    expect(marks.get('claude-opus-5-5')).toMatchObject({ mark: 'priced', catalogue_id: 'claude-opus-5-5' });
    expect(marks.get('claude-opus-4-5')).toMatchObject({ mark: 'priced', lifecycle: 'deprecated' });
    expect(api.models.filter((m) => m.mark === 'unpriced').map((m) => m.id)).toEqual(['claude-opus-6']);
    expect(api.not_listed).toEqual(['claude-local-1']);
    expect(api.models.map((m) => m.id)).toEqual(
      out.models
        .filter((m) => m.id !== 'claude-local-1')
        .map((m) => m.id)
        .concat('claude-opus-6'),
    );

    // As a table, with the CLI's catalogue built in: the endpoint's section follows it.
    const text = await run(['--from-api', 'anthropic', '--date', '2026-11-30'], env);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^claude-opus-6 +active +unpriced: not in the catalogue$/m);
    expect(text.stdout).toContain('The endpoint lists every catalogue model.');
  });

  it('exits 2 without ANTHROPIC_API_KEY, before any request', async () => {
    const emu = await emulator({ modelTable: serverTable });
    const noKey = await run(['--from-api', 'anthropic'], { ANTHROPIC_BASE_URL: emu.url });
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toContain('--from-api anthropic: ANTHROPIC_API_KEY is not set');
    expect(noKey.stdout).toBe('');
    expect(emu.stats().requests.total).toBe(0);
  });

  it('fails with the endpoint named when the key is refused', async () => {
    const emu = await emulator({ modelTable: serverTable, apiKey: 'sk-right' });
    // the old spelling --api still works, hidden (its name is run's --api now)
    const out = await run(['--api', 'anthropic'], { ANTHROPIC_API_KEY: 'sk-wrong', ANTHROPIC_BASE_URL: emu.url });
    expect(out.code).toBe(1);
    expect(out.stderr).toContain(`GET ${emu.url}/v1/models failed: 401`);
    expect(out.stdout).toBe('');
  });
});
