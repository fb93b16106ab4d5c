import type Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/util/clock.ts';
import { displayName } from '../../../src/integrations/emulator/server/models.ts';
import { BUILTIN_CATALOGUE, mergeCatalogue } from '../../../src/core/models/catalogue.ts';
import { statusAt } from '../../../src/core/models/status.ts';
import { apiError, client, emulator } from './helpers.ts';

// Claude Sonnet 4.5 reaches end of life on 2026-11-30: the day decides whether it is listed.
const NOV_29 = Date.parse('2026-11-29T23:00:00Z');
const NOV_30 = Date.parse('2026-11-30T12:00:00Z');

/** The ids the list should hold at `at`: every model not retired, in the catalogue's order. */
function notRetired(at: number): string[] {
  return BUILTIN_CATALOGUE.models.filter((m) => statusAt(m, at) !== 'retired').map((m) => m.id);
}

async function emulatorAt(at: number, extra: Parameters<typeof emulator>[0] = {}) {
  const clock = new ManualClock(at);
  return { emu: await emulator({ clock, ...extra }), clock };
}

describe('GET /v1/models', () => {
  it('pages through every model not retired, newest first, as the SDK follows after_id', async () => {
    const { emu } = await emulatorAt(NOV_30);
    const api = client(emu);
    const first = await api.models.list({ limit: 5 });
    const expected = notRetired(NOV_30);
    expect(first.data.map((m) => m.id)).toEqual(expected.slice(0, 5));
    expect(first).toMatchObject({ has_more: true, first_id: expected[0], last_id: expected[4] });
    const second = await first.getNextPage();
    expect(second.data.map((m) => m.id)).toEqual(expected.slice(5, 10));

    const seen: string[] = [];
    const before = emu.stats().requests.total;
    for await (const model of api.models.list({ limit: 5 })) seen.push(model.id);
    expect(seen).toEqual(expected);
    expect(emu.stats().requests.total - before).toBe(Math.ceil(expected.length / 5));
    expect(seen).toContain('claude-opus-4-5'); // deprecated: still listed
    expect(seen).not.toContain('claude-sonnet-4-5'); // retired today
    expect(seen).not.toContain('claude-opus-4-1');
  });

  it('defaults to 20 a page and pages backwards with before_id', async () => {
    const api = client((await emulatorAt(NOV_30)).emu);
    const expected = notRetired(NOV_30);
    const page = await api.models.list();
    expect(page.data).toHaveLength(Math.min(20, expected.length));
    const back = await api.models.list({ before_id: expected[7]!, limit: 3 });
    expect(back.data.map((m) => m.id)).toEqual(expected.slice(4, 7));
    expect(back.has_more).toBe(true);
    const start = await api.models.list({ before_id: expected[2]!, limit: 3 });
    expect(start.data.map((m) => m.id)).toEqual(expected.slice(0, 2));
    expect(start.has_more).toBe(false);
  });

  it('lists a model until its end of life, then drops it', async () => {
    const { emu, clock } = await emulatorAt(NOV_29);
    const api = client(emu);
    const ids = async () => (await api.models.list({ limit: 1000 })).data.map((m) => m.id);
    expect(await ids()).toContain('claude-sonnet-4-5');
    expect(await api.models.retrieve('claude-sonnet-4-5')).toMatchObject({
      lifecycle: 'deprecated',
      retires_at: '2026-11-30T00:00:00Z',
    });
    clock.advance(60 * 60 * 1000);
    expect(await ids()).not.toContain('claude-sonnet-4-5');
    expect((await apiError(api.models.retrieve('claude-sonnet-4-5'))).status).toBe(404);
  });

  it('lists retired models only when the lifecycle filter asks for them', async () => {
    const api = client((await emulatorAt(NOV_30)).emu);
    const retired = await api.models.list({ lifecycle: ['retired'], limit: 1000 });
    expect(retired.data.map((m) => m.id)).toEqual(
      BUILTIN_CATALOGUE.models.filter((m) => statusAt(m, NOV_30) === 'retired').map((m) => m.id),
    );
    expect(retired.data.map((m) => m.lifecycle)).toEqual(retired.data.map(() => 'retired'));
    const deprecated = await api.models.list({ lifecycle: ['deprecated'] });
    expect(deprecated.data.map((m) => m.id)).toEqual(['claude-opus-4-5']);
  });

  it('answers 400 naming the parameter for a bad limit, lifecycle or cursor', async () => {
    const api = client((await emulatorAt(NOV_30)).emu);
    const bad = async (params: Anthropic.ModelListParams) => {
      const err = await apiError(api.models.list(params));
      expect(err.status).toBe(400);
      expect(err.type).toBe('invalid_request_error');
      return err.apiMessage;
    };
    expect(await bad({ limit: 0 })).toBe('limit: expected an integer from 1 to 1000 (got "0")');
    expect(await bad({ limit: 1001 })).toContain('limit:');
    expect(await bad({ lifecycle: ['gone' as 'retired'] })).toContain(
      'lifecycle: expected active, deprecated or retired (got "gone")',
    );
    expect(await bad({ after_id: 'claude-nope' })).toContain('after_id: "claude-nope"');
  });

  it('checks auth and the API version as the other routes do', async () => {
    const { emu } = await emulatorAt(NOV_30, { apiKey: 'sk-right' });
    const get = (path: string, headers: Record<string, string>) => fetch(`${emu.url}${path}`, { headers });
    expect((await get('/v1/models', { 'anthropic-version': '2023-06-01' })).status).toBe(401);
    expect(
      (await get('/v1/models/claude-opus-5-5', { 'x-api-key': 'sk-wrong', 'anthropic-version': '2023-06-01' })).status,
    ).toBe(401);
    const noVersion = await get('/v1/models/claude-opus-5-5', { 'x-api-key': 'sk-right' });
    expect(noVersion.status).toBe(400);
    expect(await noVersion.json()).toMatchObject({
      error: { type: 'invalid_request_error', message: 'anthropic-version: header is required' },
    });
    expect(
      (await get('/v1/models/claude-opus-5-5', { authorization: 'Bearer sk-right', 'anthropic-version': '2023-06-01' }))
        .status,
    ).toBe(200);
  });
});

describe('GET /v1/models/{id}', () => {
  it("answers one model in the SDK's ModelInfo shape, from the catalogue", async () => {
    const api = client((await emulatorAt(NOV_30)).emu);
    const model: Anthropic.ModelInfo = await api.models.retrieve('claude-opus-5-5');
    expect(model).toEqual({
      type: 'model',
      id: 'claude-opus-5-5',
      display_name: 'Claude Opus 5.5',
      created_at: '1970-01-01T00:00:00Z',
      lifecycle: 'active',
      line: 'opus',
      deprecated_at: null,
      retires_at: null,
      max_input_tokens: 1_000_000,
      max_tokens: 128_000,
      capabilities: null,
    });
    expect(await api.models.retrieve('claude-opus-4-5')).toMatchObject({
      lifecycle: 'deprecated',
      retires_at: '2027-01-22T00:00:00Z',
      max_input_tokens: 200_000,
    });
  });

  it('answers an alias or dated id with the canonical id', async () => {
    const api = client((await emulatorAt(NOV_30)).emu);
    expect((await api.models.retrieve('claude-haiku-4-5-20251001')).id).toBe('claude-haiku-4-5');
    expect((await api.models.retrieve('claude-opus-5-5-latest')).id).toBe('claude-opus-5-5');
  });

  it('answers 404 not_found_error for an unknown or retired id', async () => {
    const api = client((await emulatorAt(NOV_30)).emu);
    for (const id of ['claude-nope-9', 'claude-opus-4-1', 'claude-opus-4-20250514']) {
      const err = await apiError(api.models.retrieve(id));
      expect(err.status).toBe(404);
      expect(err).toMatchObject({ type: 'not_found_error', apiMessage: `model: ${id}` });
    }
  });

  it('serves the models of the table it was started with', async () => {
    const table = mergeCatalogue({
      date: '2026-12-01',
      models: [{ id: 'claude-opus-6', prices: [{ effectiveFrom: '2026-12-01', inputPerMTok: 4, outputPerMTok: 20 }] }],
    });
    const api = client((await emulatorAt(NOV_30, { modelTable: table })).emu);
    expect(await api.models.retrieve('claude-opus-6')).toMatchObject({
      id: 'claude-opus-6',
      display_name: 'Claude Opus 6',
      lifecycle: 'active',
    });
    expect((await api.models.list({ limit: 1000 })).data.map((m) => m.id)).toContain('claude-opus-6');
  });
});

describe('displayName', () => {
  it('joins version numbers with dots', () => {
    expect(['claude-opus-5-5', 'claude-3-5-haiku', 'claude-opus-4', 'claude-fable-5-2'].map(displayName)).toEqual([
      'Claude Opus 5.5',
      'Claude 3.5 Haiku',
      'Claude Opus 4',
      'Claude Fable 5.2',
    ]);
  });
});
