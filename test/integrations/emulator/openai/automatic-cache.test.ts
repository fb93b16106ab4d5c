import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../../src/core/util/clock.ts';
import { chatClient, chatEmulator, drive, usageOf, waitForEvents, words } from './helpers.ts';

/*
 * OpenAI's and DeepSeek's automatic prefix caching, through the real `openai` client: no
 * markers; any prefix an earlier *completed* request sent is reused, reported in steps.
 */

const MODEL = 'gpt-5';
const turn = (prefix: string, question: string) => [
  { role: 'system' as const, content: prefix },
  { role: 'user' as const, content: question },
];

describe('OpenAI automatic prefix caching', () => {
  it('misses cold, then hits a 20K-token prefix warm, in whole 128-token steps', async () => {
    const api = chatClient(await chatEmulator('openai'));
    const prefix = words(20_000, 'p');
    const cold = await api.chat.completions.create({ model: MODEL, messages: turn(prefix, 'first question here') });
    expect(cold.usage?.prompt_tokens).toBe(20_003);
    expect(cold.usage?.prompt_tokens_details?.cached_tokens).toBe(0);
    const warm = await api.chat.completions.create({ model: MODEL, messages: turn(prefix, 'a different question') });
    // The system message (20,000 tokens) is the shared prefix: 156 steps of 128 = 19,968.
    expect(warm.usage?.prompt_tokens).toBe(20_003);
    expect(warm.usage?.prompt_tokens_details?.cached_tokens).toBe(19_968);
  });

  it('reports nothing below 1,024 shared tokens, and 1,024 / 1,152 just above the steps', async () => {
    const api = chatClient(await chatEmulator('openai'));
    const cases: [number, number][] = [
      [1_023, 0],
      [1_024, 1_024],
      [1_151, 1_024],
      [1_152, 1_152],
      [1_300, 1_280],
    ];
    for (const [size, cached] of cases) {
      const prefix = words(size, `s${size}-`);
      await api.chat.completions.create({ model: MODEL, messages: turn(prefix, 'one') });
      const again = await api.chat.completions.create({ model: MODEL, messages: turn(prefix, 'two') });
      expect([size, again.usage?.prompt_tokens_details?.cached_tokens]).toEqual([size, cached]);
    }
  });

  it("grows with the conversation: the previous prompt is the next prompt's cached prefix", async () => {
    const api = chatClient(await chatEmulator('openai'));
    const messages: { role: 'system' | 'user' | 'assistant'; content: string }[] = [
      { role: 'system', content: words(2_000, 'g') },
      { role: 'user', content: words(300, 'u1-') },
    ];
    const first = await api.chat.completions.create({ model: MODEL, messages });
    messages.push(
      { role: 'assistant', content: first.choices[0]!.message.content! },
      { role: 'user', content: words(10, 'u2-') },
    );
    const second = await api.chat.completions.create({ model: MODEL, messages });
    expect(second.usage?.prompt_tokens_details?.cached_tokens).toBe(Math.floor(2_300 / 128) * 128);
  });

  it('makes an entry readable only when the creating response completes: a sibling sent mid-stream misses', async () => {
    const clock = new ManualClock();
    const emu = await chatEmulator('openai', {
      clock,
      latency: { baseMs: 100, prefillMsPerToken: 0, cacheReadMsPerToken: 0, outputTokensPerSecond: 10 },
    });
    const api = chatClient(emu);
    const prefix = words(4_000, 'r');
    const parked = waitForEvents(emu, 'request-start');
    const started = waitForEvents(emu, 'response-start');
    const first = (async () => {
      const stream = await api.chat.completions.create({
        model: MODEL,
        messages: turn(prefix, 'first'),
        stream: true,
        stream_options: { include_usage: true },
      });
      let usage: unknown;
      for await (const chunk of stream) usage = chunk.usage ?? usage;
      return usage as { prompt_tokens_details: { cached_tokens: number } };
    })();
    await parked;
    clock.advance(100);
    await started; // the first response is streaming (paced on the clock, which stands still)
    const siblingPlanned = waitForEvents(emu, 'request-start');
    const sibling = api.chat.completions.create({ model: MODEL, messages: turn(prefix, 'sibling') });
    const [planned] = await siblingPlanned;
    expect(planned!.usage!.cache_read_input_tokens).toBe(0);
    const [firstUsage, siblingDone] = await drive(clock, Promise.all([first, sibling]));
    expect(siblingDone.usage?.prompt_tokens_details?.cached_tokens).toBe(0);
    expect(firstUsage.prompt_tokens_details.cached_tokens).toBe(0);
    const after = await drive(clock, api.chat.completions.create({ model: MODEL, messages: turn(prefix, 'after') }));
    expect(after.usage?.prompt_tokens_details?.cached_tokens).toBe(3_968);
  });

  it('forgets an idle prefix after 5 minutes; a hit restarts the 5 minutes', async () => {
    const clock = new ManualClock(1_000_000);
    const api = chatClient(await chatEmulator('openai', { clock }));
    const prefix = words(2_048, 't');
    const ask = (q: string) => api.chat.completions.create({ model: MODEL, messages: turn(prefix, q) });
    await ask('a');
    clock.advance(4 * 60_000);
    expect((await ask('b')).usage?.prompt_tokens_details?.cached_tokens).toBe(2_048);
    clock.advance(4 * 60_000); // 8 minutes after the write, 4 after the hit
    expect((await ask('c')).usage?.prompt_tokens_details?.cached_tokens).toBe(2_048);
    clock.advance(5 * 60_000 + 1);
    expect((await ask('d')).usage?.prompt_tokens_details?.cached_tokens).toBe(0);
  });

  it('keeps models apart: the same prompt on another model misses', async () => {
    const api = chatClient(await chatEmulator('openai'));
    const prefix = words(2_048, 'm');
    await api.chat.completions.create({ model: MODEL, messages: turn(prefix, 'a') });
    const other = await api.chat.completions.create({ model: 'gpt-4.1', messages: turn(prefix, 'a') });
    expect(other.usage?.prompt_tokens_details?.cached_tokens).toBe(0);
  });
});

describe('DeepSeek automatic caching', () => {
  it('reports prompt_cache_hit_tokens / prompt_cache_miss_tokens in 64-token units', async () => {
    const api = chatClient(await chatEmulator('deepseek'));
    const prefix = words(1_000, 'd');
    const cold = await api.chat.completions.create({ model: 'deepseek-chat', messages: turn(prefix, 'one') });
    expect(usageOf(cold)).toMatchObject({
      prompt_tokens: 1_001,
      prompt_cache_hit_tokens: 0,
      prompt_cache_miss_tokens: 1_001,
    });
    const warm = await api.chat.completions.create({ model: 'deepseek-chat', messages: turn(prefix, 'two') });
    expect(usageOf(warm)).toMatchObject({
      prompt_tokens: 1_001,
      prompt_cache_hit_tokens: 960,
      prompt_cache_miss_tokens: 41,
      prompt_tokens_details: { cached_tokens: 960 },
    });
  });
});
