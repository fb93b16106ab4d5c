import type Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/util/clock.ts';
import type { LatencyProfile } from '../../../src/integrations/emulator/latency.ts';
import { MODEL, cc, client, drive, emulator, waitForEvents, words } from './helpers.ts';

/*
 * "An entry becomes readable only when the writing response has begun." The emulator waits out
 * each request's time to first token on a ManualClock, so the tests decide exactly when each
 * response begins. Synchronisation is by the emulator's events, never by timers.
 */

const params: Anthropic.MessageCreateParamsNonStreaming = {
  model: MODEL,
  max_tokens: 200,
  system: [{ type: 'text', text: words(50, 'shared'), cache_control: cc }],
  messages: [{ role: 'user', content: 'go' }],
};

// 1 s to first token whatever the input; output paced at 10 tokens/s so a response stays
// "in progress" (begun, not finished) while the clock stands still.
const profile: Partial<LatencyProfile> = {
  baseMs: 1000,
  prefillMsPerToken: 0,
  cacheReadMsPerToken: 0,
  outputTokensPerSecond: 10,
};

describe('cache visibility under concurrency', () => {
  it('two requests sent before either response begins both miss and both write', async () => {
    const clock = new ManualClock();
    const emu = await emulator({ clock, latency: profile });
    const api = client(emu);
    const started = waitForEvents(emu, 'request-start', 2);
    const a = api.messages.create(params);
    const b = api.messages.create(params);
    const events = await started;
    for (const e of events)
      expect(e.usage).toMatchObject({ cache_read_input_tokens: 0, cache_creation_input_tokens: 50 });
    const [ra, rb] = await drive(clock, Promise.all([a, b]));
    expect([ra.usage.cache_creation_input_tokens, rb.usage.cache_creation_input_tokens]).toEqual([50, 50]);
    const c = await drive(clock, api.messages.create(params));
    expect(c.usage).toMatchObject({ cache_read_input_tokens: 50, cache_creation_input_tokens: 0 });
    expect(emu.stats().cache).toMatchObject({ hits: 1, misses: 2, entries: 1 });
  });

  it('a streaming writer makes its entry readable at message_start, before it finishes', async () => {
    const clock = new ManualClock();
    // Output so slow that the 1 s steps of `drive` cannot finish the stream by accident.
    const emu = await emulator({ clock, latency: { ...profile, outputTokensPerSecond: 0.001 } });
    const api = client(emu);
    const stream = await drive(clock, api.messages.create({ ...params, stream: true }));
    const events = stream[Symbol.asyncIterator]();
    expect((await events.next()).value?.type).toBe('message_start');
    let writerEnded = false;
    emu.on('request-end', () => (writerEnded = true));
    const reader = waitForEvents(emu, 'request-start');
    const later = api.messages.create(params);
    const [seen] = await reader;
    expect(writerEnded).toBe(false);
    expect(seen!.usage).toMatchObject({ cache_read_input_tokens: 50, cache_creation_input_tokens: 0 });
    const rest = (async () => {
      for (let e = await events.next(); !e.done; e = await events.next());
    })();
    await drive(clock, Promise.all([rest, later]), 1e9);
    expect(writerEnded).toBe(true);
  });

  it('a non-streaming writer is readable once its time to first token has passed', async () => {
    const clock = new ManualClock();
    const emu = await emulator({ clock, latency: profile });
    const api = client(emu);
    const begun = waitForEvents(emu, 'response-start');
    const writer = api.messages.create(params);
    await waitForEvents(emu, 'request-start');
    clock.advance(999);
    const early = waitForEvents(emu, 'request-start');
    const tooEarly = api.messages.create(params);
    expect((await early)[0]!.usage?.cache_read_input_tokens).toBe(0);
    clock.advance(1);
    await begun;
    const onTime = waitForEvents(emu, 'request-start');
    const reader = api.messages.create(params);
    expect((await onTime)[0]!.usage?.cache_read_input_tokens).toBe(50);
    await drive(clock, Promise.all([writer, tooEarly, reader]));
  });

  it('makes time to first token grow with uncached input and shrink with cache reads', async () => {
    const clock = new ManualClock();
    const emu = await emulator({ clock, latency: 'realistic' });
    const api = client(emu);
    const ttfts: number[] = [];
    emu.on('request-start', (e) => ttfts.push(e.ttftMs!));
    await drive(clock, api.messages.create(params), 100);
    await drive(clock, api.messages.create(params), 100);
    // realistic: 400 ms + 0.25 ms per uncached token, 0.02 ms per cached one (51 = 50 + "go").
    expect(ttfts).toEqual([400 + 51 * 0.25, 400 + 50 * 0.02 + 1 * 0.25]);
  });
});
