import type Anthropic from '@anthropic-ai/sdk';
import { APIConnectionError, APIUserAbortError } from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/util/clock.ts';
import { startEmulator } from '../../../src/integrations/emulator/start.ts';
import { MODEL, cc, client, drive, emulator, waitForEvents, words } from './helpers.ts';

const params: Anthropic.MessageCreateParamsNonStreaming = {
  model: MODEL,
  max_tokens: 20,
  system: [{ type: 'text', text: words(30, 'sys'), cache_control: cc }],
  messages: [{ role: 'user', content: 'hi there' }],
};
const slow = { baseMs: 1000, prefillMsPerToken: 0, cacheReadMsPerToken: 0, outputTokensPerSecond: 1000 };

describe('emulator server', () => {
  it('binds to 127.0.0.1 on a free port by default', async () => {
    const emu = await emulator();
    expect(emu.url).toBe(`http://127.0.0.1:${emu.port}`);
    expect(emu.port).toBeGreaterThan(0);
  });

  it('reports requests, tokens and cache entries in stats() and at GET /v1/emulator/stats', async () => {
    const emu = await emulator();
    const api = client(emu);
    await api.messages.create(params);
    await api.messages.create(params);
    await api.messages.countTokens({ model: MODEL, messages: params.messages });
    const stats = emu.stats();
    expect(stats.requests).toMatchObject({
      total: 3,
      messages: 2,
      countTokens: 1,
      streaming: 0,
      errors: 0,
      byStatus: { '200': 3 },
    });
    expect(stats.tokens).toMatchObject({
      uncached: 4,
      cacheRead: 30,
      cacheWrite: 30,
      cacheWrite5m: 30,
      cacheWrite1h: 0,
    });
    expect(stats.tokens.output).toBeGreaterThan(0);
    expect(stats.cache).toMatchObject({ entries: 1, hits: 1, misses: 1, writes: 1 });
    const served = (await (await fetch(`${emu.url}/v1/emulator/stats`)).json()) as typeof stats;
    expect(served.tokens).toEqual(stats.tokens);
    expect(served.requests.total).toBe(4);
    expect(emu.cacheEntries()).toHaveLength(1);
    emu.clearCache();
    expect(emu.stats().cache.entries).toBe(0);
  });

  it('lists the model table at GET /v1/models', async () => {
    const api = client(await emulator());
    const models = await api.models.list();
    expect(models.data.map((m) => m.id)).toContain(MODEL);
  });

  it('commits no cache write when the client leaves before the response begins', async () => {
    const clock = new ManualClock();
    const emu = await emulator({ clock, latency: slow });
    const controller = new AbortController();
    const started = waitForEvents(emu, 'request-start');
    const gone = client(emu).messages.create(params, { signal: controller.signal });
    await started;
    const ended = waitForEvents(emu, 'request-end');
    controller.abort();
    await expect(gone).rejects.toBeInstanceOf(APIUserAbortError);
    expect((await ended)[0]).toMatchObject({ error: 'aborted' });
    clock.advance(10_000);
    expect(emu.cacheEntries()).toHaveLength(0);
    expect(emu.stats().requests.messages).toBe(0);
    const next = await drive(clock, client(emu).messages.create(params));
    expect(next.usage).toMatchObject({ cache_read_input_tokens: 0, cache_creation_input_tokens: 30 });
  });

  it('closes gracefully: in-flight requests finish, new connections are refused', async () => {
    const clock = new ManualClock();
    const emu = await startEmulator({ clock, latency: slow });
    const api = client(emu);
    const started = waitForEvents(emu, 'request-start');
    const inFlight = api.messages.create(params);
    await started;
    let closed = false;
    const closing = emu.close().then(() => (closed = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(closed).toBe(false);
    const done = await drive(clock, inFlight);
    expect(done.type).toBe('message');
    await closing;
    await expect(fetch(`${emu.url}/v1/emulator/stats`)).rejects.toThrow();
  });

  it('destroy() cuts in-flight requests off', async () => {
    const clock = new ManualClock();
    const emu = await startEmulator({ clock, latency: slow });
    const started = waitForEvents(emu, 'request-start');
    const inFlight = client(emu).messages.create(params);
    await started;
    await emu.destroy();
    await expect(inFlight).rejects.toBeInstanceOf(APIConnectionError);
  });

  it.each([
    [{ port: -1 }, 'port'],
    [{ latency: 'warp' as 'off' }, 'latency'],
    [{ faults: '429:2' }, 'faults'],
    [{ tokenizer: {} as { count(t: string): number } }, 'tokenizer'],
    [{ maxBodyBytes: 0 }, 'maxBodyBytes'],
  ])('rejects bad options %j naming the field', async (options, field) => {
    await expect(startEmulator(options)).rejects.toThrow(
      expect.objectContaining({ code: 'INVALID_OPTION', message: expect.stringContaining(field) }),
    );
  });
});
