import Anthropic, { APIConnectionError } from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/util/clock.ts';
import { FaultInjector } from '../../../src/integrations/emulator/faults.ts';
import { parseFaultSpec } from '../../../src/integrations/emulator/faults.ts';
import { MODEL, apiError, client, drive, emulator, waitForEvents } from './helpers.ts';

const params: Anthropic.MessageCreateParamsNonStreaming = {
  model: MODEL,
  max_tokens: 50,
  messages: [{ role: 'user', content: 'hello' }],
};
const forced = (fault: string) => ({ headers: { 'x-forkcache-fault': fault } });

describe('fault spec', () => {
  it('parses kind:probability lists', () => {
    expect(parseFaultSpec('429:0.1, 529:0.05,stream-error:0.05,reset:0.02,slow:0.1')).toEqual([
      { kind: '429', probability: 0.1 },
      { kind: '529', probability: 0.05 },
      { kind: 'stream-error', probability: 0.05 },
      { kind: 'reset', probability: 0.02 },
      { kind: 'slow', probability: 0.1 },
    ]);
    expect(parseFaultSpec('')).toEqual([]);
  });

  it.each([
    ['418:0.1', 'unknown fault "418"'],
    ['429:1.5', 'from 0 to 1'],
    ['429:0.6,500:0.6', 'more than 1'],
    ['429', 'is not kind:probability'],
  ])('rejects %s', (spec, message) => {
    expect(() => parseFaultSpec(spec)).toThrow(message);
  });

  it('draws the same faults for the same seed, at the configured rate', () => {
    const draw = (seed: number) => {
      const injector = new FaultInjector(parseFaultSpec('429:0.3,500:0.2'), seed);
      return Array.from({ length: 2000 }, () => injector.pick(undefined) ?? 'ok');
    };
    const a = draw(7);
    expect(draw(7)).toEqual(a);
    expect(draw(8)).not.toEqual(a);
    const share = (kind: string) => a.filter((k) => k === kind).length / a.length;
    expect(share('429')).toBeCloseTo(0.3, 1);
    expect(share('500')).toBeCloseTo(0.2, 1);
  });
});

describe('faults through the SDK', () => {
  it.each([
    ['429', 429, 'rate_limit_error'],
    ['529', 529, 'overloaded_error'],
    ['500', 500, 'api_error'],
    ['504', 504, 'timeout_error'],
  ])('forces %s by header', async (fault, status, type) => {
    const api = client(await emulator());
    const err = await apiError(api.messages.create(params, forced(fault)));
    expect(err).toMatchObject({ status, type });
    if (status === 429) expect(err.headers?.get('retry-after')).toBe('1');
  });

  it('resets the connection', async () => {
    const api = client(await emulator());
    await expect(api.messages.create(params, forced('reset'))).rejects.toBeInstanceOf(APIConnectionError);
  });

  it('fails a non-streaming request after its response would begin (stream-error)', async () => {
    const emu = await emulator();
    const err = await apiError(client(emu).messages.create(params, forced('stream-error')));
    expect(err.status).toBe(500);
  });

  it('slows the time to first token (slow)', async () => {
    const clock = new ManualClock();
    const emu = await emulator({
      clock,
      latency: {
        baseMs: 100,
        prefillMsPerToken: 0,
        cacheReadMsPerToken: 0,
        outputTokensPerSecond: 1000,
        slowFactor: 10,
        slowExtraMs: 5000,
      },
    });
    const api = client(emu);
    const seen = waitForEvents(emu, 'request-start');
    const slow = api.messages.create(params, forced('slow'));
    expect((await seen)[0]!.ttftMs).toBe(100 * 10 + 5000);
    await drive(clock, slow, 1000);
  });

  it('draws faults from the spec, and lets a header force none', async () => {
    const emu = await emulator({ faults: '429:1', seed: 3 });
    const api = client(emu);
    expect((await apiError(api.messages.create(params))).status).toBe(429);
    expect((await api.messages.create(params, forced('none'))).type).toBe('message');
    expect((await apiError(api.messages.create(params, forced('teapot')))).status).toBe(400);
    expect(emu.stats().requests).toMatchObject({
      faults: { '429': 1 },
      byStatus: { '429': 1, '200': 1, '400': 1 },
      errors: 2,
    });
  });

  it('lets the SDK retry an injected 429 using retry-after', async () => {
    // 1 ms: the SDK ignores a zero retry-after and would fall back to its own backoff.
    const emu = await emulator({ faults: '429:0.5', seed: 1, retryAfterSeconds: 0.001 });
    const api = new Anthropic({ apiKey: 'test', baseURL: emu.url, maxRetries: 8 });
    for (let i = 0; i < 5; i++) expect((await api.messages.create(params)).type).toBe('message');
    expect(emu.stats().requests.faults['429']).toBeGreaterThan(0);
  });
});
