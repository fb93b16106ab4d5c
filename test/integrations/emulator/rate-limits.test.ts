import type Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/util/clock.ts';
import { parseRateLimitHeaders } from '../../../src/core/rate-limits/headers.ts';
import { presetTable, resolveRateLimits } from '../../../src/core/rate-limits/presets.ts';
import { MODEL, apiError, cc, client, emulator, words } from './helpers.ts';

type Params = Anthropic.MessageCreateParamsNonStreaming;

/** A prompt of `n` words with a marker on it: the first request writes n tokens, a repeat reads them. */
const params = (n: number, tag: string, extra: Partial<Params> = {}): Params => ({
  model: MODEL,
  max_tokens: 64,
  messages: [{ role: 'user', content: [{ type: 'text', text: words(n, tag), cache_control: cc }] }],
  ...extra,
});

const table = (
  limits: { rpm?: number; itpm?: number; otpm?: number; cacheReadsCount?: boolean },
  extra: Record<string, unknown> = {},
) => ({
  classes: { default: { rpm: 1000, itpm: 1_000_000, otpm: 1_000_000, ...limits } },
  ...extra,
});

describe('emulator rate limits', () => {
  it('puts the anthropic-ratelimit-* headers on every response, from the Start preset', async () => {
    const api = client(
      await emulator({ rateLimits: 'start', clock: new ManualClock(Date.parse('2026-11-30T00:00:00Z')) }),
    );
    const { response } = await api.messages.create(params(20, 'h')).withResponse();
    const headers = parseRateLimitHeaders(response.headers);
    expect(headers.requests).toMatchObject({ limit: 1000, remaining: 999 });
    expect(headers['input-tokens']).toMatchObject({ limit: 2_000_000, remaining: 2_000_000 }); // 20 spent, rounded to the thousand
    expect(headers['output-tokens']?.limit).toBe(400_000);
    expect(response.headers.get('anthropic-ratelimit-requests-reset')).toBe('2026-11-30T00:00:00Z'); // refilled at once to the second
    expect(response.headers.get('retry-after')).toBeNull();
  });

  it('counts uncached input and cache writes toward ITPM, not cache reads (unless the class says so)', async () => {
    const api = client(await emulator({ rateLimits: table({ itpm: 100 }), clock: new ManualClock() }));
    await api.messages.create(params(60, 'a')); // writes 60: 40 left
    expect((await api.messages.create(params(60, 'a'))).usage.cache_read_input_tokens).toBe(60); // reads are free
    const err = await apiError(api.messages.create(params(60, 'b'))); // 60 more uncached: over
    expect(err.status).toBe(429);
    expect(err.message).toMatch(/100 input tokens per minute/);
    expect(err.headers?.get('retry-after')).toBe('12'); // 20 missing at 100 a minute
    expect(parseRateLimitHeaders(err.headers!)['input-tokens']).toMatchObject({ limit: 100, remaining: 40 });

    const counting = client(
      await emulator({ rateLimits: table({ itpm: 100, cacheReadsCount: true }), clock: new ManualClock() }),
    );
    await counting.messages.create(params(60, 'a'));
    expect((await apiError(counting.messages.create(params(60, 'a')))).status).toBe(429);
  });

  it('refills continuously on the injected clock, and a short window forbids the burst', async () => {
    const clock = new ManualClock();
    const api = client(await emulator({ rateLimits: table({ rpm: 60 }), clock }));
    for (let i = 0; i < 60; i++) await api.messages.create(params(3, `r${i}`));
    const err = await apiError(api.messages.create(params(3, 'over')));
    expect(err.headers?.get('retry-after')).toBe('1');
    expect(err.error).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } });
    expect((err.error as { error: { details?: unknown } }).error.details).toBeUndefined(); // an ordinary limit: no error_code
    clock.advance(999);
    expect((await apiError(api.messages.create(params(3, 'over')))).status).toBe(429);
    clock.advance(1);
    await api.messages.create(params(3, 'over'));

    const windowed = client(
      await emulator({ rateLimits: table({ rpm: 60 }, { windowSeconds: 1 }), clock: new ManualClock() }),
    );
    await windowed.messages.create(params(3, 'w1'));
    expect((await apiError(windowed.messages.create(params(3, 'w2')))).status).toBe(429); // 60 RPM over 1 s: one a second
  });

  it('spends OTPM as output is generated: a long answer empties the bucket for the next request', async () => {
    const clock = new ManualClock();
    const api = client(await emulator({ rateLimits: table({ otpm: 6 }), clock, script: 'echo' }));
    const first = await api.messages.create(params(3, 'o'));
    expect(first.usage.output_tokens).toBeGreaterThan(6);
    const err = await apiError(api.messages.create(params(3, 'p')));
    expect(err.message).toMatch(/6 output tokens per minute/);
    clock.advance(Number(err.headers!.get('retry-after')) * 1000);
    await api.messages.create(params(3, 'p'));
  });

  it('keeps buckets per API key and per model class', async () => {
    const emu = await emulator({ rateLimits: table({ rpm: 1 }), clock: new ManualClock() });
    await client(emu).messages.create(params(3, 'k'));
    expect((await apiError(client(emu).messages.create(params(3, 'k')))).status).toBe(429);
    await client(emu, { apiKey: 'other' }).messages.create(params(3, 'k'));
    await client(emu).messages.create(params(3, 'k', { model: 'claude-opus-4-8' }));
  });

  it('answers a sharp increase with ramp_limit_exceeded, and lets the rate double each window', async () => {
    const clock = new ManualClock();
    const api = client(
      await emulator({ rateLimits: table({}, { ramp: { windowSeconds: 10, factor: 2, floor: 3 } }), clock }),
    );
    for (let i = 0; i < 3; i++) await api.messages.create(params(3, `a${i}`));
    const err = await apiError(api.messages.create(params(3, 'a3')));
    expect(err.error).toMatchObject({
      error: { type: 'rate_limit_error', details: { error_code: 'ramp_limit_exceeded' } },
    });
    expect(err.headers?.get('retry-after')).toBe('10');
    clock.advance(10_000);
    for (let i = 0; i < 6; i++) await api.messages.create(params(3, `b${i}`)); // 2 × 3
    expect((await apiError(api.messages.create(params(3, 'b6')))).status).toBe(429);
  });

  it('stops every request at the spend cap, without retry-after, until the cap is lifted', async () => {
    const emu = await emulator({
      rateLimits: table({}, { spendLimitUsd: 0.0001 }),
      clock: new ManualClock(Date.parse('2026-11-30T00:00:00Z')),
    });
    const api = client(emu);
    await api.messages.create(params(200, 's')); // $0.0006 on Sonnet 4.6: past the cap
    expect(emu.rateLimits.spent('test')).toBeGreaterThan(0.0001);
    const err = await apiError(api.messages.create(params(3, 't')));
    expect(err.status).toBe(429);
    expect(err.error).toMatchObject({ error: { details: { error_code: 'enforced_spend_limit_reached' } } });
    expect(err.headers?.get('retry-after')).toBeNull();
    expect(err.headers?.get('anthropic-ratelimit-requests-limit')).toBe('1000');
    emu.rateLimits.setSpendLimit(undefined);
    await api.messages.create(params(3, 't'));
  });
});

describe('--rate-limits', () => {
  it('presets label the 5.5 rows as placeholders', () => {
    const start = presetTable('start');
    expect(start.classes['fable-5']).toMatchObject({ rpm: 1000, itpm: 500_000, otpm: 100_000 });
    expect(start.classes['opus-5.5']).toMatchObject({ rpm: 1000, itpm: 2_000_000, otpm: 400_000 });
    expect(start.source).toMatch(/opus-5\.5.*placeholders/);
    expect(resolveRateLimits('scale').classes['default']).toMatchObject({ rpm: 10_000 });
  });

  it('rejects a bad value or file, naming the flag and the field', async () => {
    expect(() => resolveRateLimits('enterprise')).toThrow(
      /--rate-limits: expected start, build, scale or a JSON file; cannot read "enterprise"/,
    );
    const { writeFileSync, mkdtempSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const file = join(mkdtempSync(join(tmpdir(), 'fc-rl-')), 'limits.json');
    writeFileSync(file, JSON.stringify({ preset: 'start', classes: { 'opus-5.5': { rpm: -1, itpm: 1, otpm: 1 } } }));
    expect(() => resolveRateLimits(file)).toThrow(/classes\.opus-5\.5\.rpm/);
    writeFileSync(
      file,
      JSON.stringify({
        preset: 'start',
        classes: { 'opus-5.5': { rpm: 50, itpm: 30_000, otpm: 8_000 } },
        windowSeconds: 1,
      }),
    );
    expect(resolveRateLimits(file)).toMatchObject({
      windowSeconds: 1,
      classes: { 'opus-5.5': { rpm: 50 }, default: { rpm: 1000 } },
    });
  });
});
