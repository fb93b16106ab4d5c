import type OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../../src/core/util/clock.ts';
import { chatClient, chatEmulator, openAiError, words } from './helpers.ts';

/*
 * The emulator's `POST /v1/responses` (OpenAI mode) through the real `openai` client: automatic
 * prefix caching as in its Chat mode, `prompt_cache_options` (ttl 30m/12h, prewarm, explicit
 * mode, comparison_response_id), `prompt_cache_breakpoint` on content parts, and the usage
 * with writes split by TTL. The SDK's types do not declare `12h`, `prewarm` or the comparison
 * yet: those requests go through a cast.
 */

const MODEL = 'gpt-5';
const BREAKPOINT = { mode: 'explicit' } as const;

type Params = Record<string, unknown>;
type Usage = {
  input_tokens: number;
  output_tokens: number;
  input_tokens_details: {
    cached_tokens: number;
    cache_write_tokens: number;
    cache_write_tokens_details: { ttl_30m_tokens: number; ttl_12h_tokens: number };
  };
};

async function create(api: OpenAI, params: Params): Promise<Record<string, any> & { usage: Usage }> {
  return (await api.responses.create({ model: MODEL, ...params } as never)) as never;
}

/** A system item (the shared prefix, optionally ending at a breakpoint), then a user question. */
const input = (prefix: string, question: string, breakpoint = false) => [
  {
    role: 'system',
    content: [{ type: 'input_text', text: prefix, ...(breakpoint ? { prompt_cache_breakpoint: BREAKPOINT } : {}) }],
  },
  { role: 'user', content: [{ type: 'input_text', text: question }] },
];

describe('the emulator’s Responses API: automatic caching (implicit mode)', () => {
  it('misses cold and writes the prompt for 30 minutes, then hits warm in 128-token steps', async () => {
    const api = chatClient(await chatEmulator('openai'));
    const prefix = words(4_000, 'a');
    const cold = await create(api, { input: input(prefix, 'first question here') });
    expect(cold.object).toBe('response');
    expect(cold.status).toBe('completed');
    expect(cold.usage.input_tokens).toBe(4_003);
    expect(cold.usage.input_tokens_details).toEqual({
      cached_tokens: 0,
      cache_write_tokens: 4_003,
      cache_write_tokens_details: { ttl_30m_tokens: 4_003, ttl_12h_tokens: 0 },
    });
    expect(cold.prompt_cache_options).toEqual({ mode: 'implicit', ttl: '30m' });
    const warm = await create(api, { input: input(prefix, 'a different question') });
    expect(warm.usage.input_tokens_details.cached_tokens).toBe(Math.floor(4_000 / 128) * 128);
    expect(warm.usage.input_tokens_details.cache_write_tokens).toBe(4_003 - 3_968);
  });

  it('reads exactly at a breakpoint: the boundary is not rounded to a token block', async () => {
    const api = chatClient(await chatEmulator('openai'));
    const prefix = words(4_000, 'b');
    await create(api, { input: input(prefix, 'one', true) });
    const warm = await create(api, { input: input(prefix, 'two', true) });
    expect(warm.usage.input_tokens_details.cached_tokens).toBe(4_000);
  });

  it('answers text and tool calls as output items, from the scripted model', async () => {
    const api = chatClient(await chatEmulator('openai'));
    const r = await create(api, { input: 'Say hello' });
    expect(r.output[0].type).toBe('message');
    expect(r.output[0].content[0].type).toBe('output_text');
    expect(r.output_text.length).toBeGreaterThan(0);
    expect(r.usage.output_tokens).toBeGreaterThan(0);
  });
});

describe('prompt_cache_options', () => {
  it('prewarm: no output and no output tokens, and the prefix it wrote is read by the next request', async () => {
    const api = chatClient(await chatEmulator('openai'));
    const prefix = words(3_000, 'p');
    const warm = await create(api, {
      input: input(prefix, 'x', true).slice(0, 1),
      prompt_cache_options: { prewarm: true },
    });
    expect(warm.status).toBe('completed');
    expect(warm.output).toEqual([]);
    expect(warm.usage.output_tokens).toBe(0);
    expect(warm.usage.input_tokens_details.cache_write_tokens).toBe(3_000);
    expect(warm.prompt_cache_options).toEqual({ mode: 'implicit', ttl: '30m', prewarm: true });
    const child = await create(api, { input: input(prefix, 'the real question', true) });
    expect(child.usage.input_tokens_details.cached_tokens).toBe(3_000);
    expect(child.usage.output_tokens).toBeGreaterThan(0);
  });

  it('ttl 12h: writes reported as 12-hour writes, and readable after 30 minutes when a 30m entry is not', async () => {
    const clock = new ManualClock(Date.parse('2026-12-06T00:00:00Z'));
    const api = chatClient(await chatEmulator('openai', { clock }));
    const long = words(2_000, 'l');
    const short = words(2_000, 's');
    const written = await create(api, { input: input(long, 'q', true), prompt_cache_options: { ttl: '12h' } });
    expect(written.usage.input_tokens_details.cache_write_tokens_details).toEqual({
      ttl_30m_tokens: 0,
      ttl_12h_tokens: 2_001,
    });
    await create(api, { input: input(short, 'q', true), prompt_cache_options: { ttl: '30m' } });
    clock.advance(31 * 60_000);
    const longAgain = await create(api, { input: input(long, 'r', true), prompt_cache_options: { ttl: '12h' } });
    const shortAgain = await create(api, { input: input(short, 'r', true) });
    expect(longAgain.usage.input_tokens_details.cached_tokens).toBe(2_000);
    expect(shortAgain.usage.input_tokens_details.cached_tokens).toBe(0);
    clock.advance(13 * 60 * 60_000);
    const expired = await create(api, { input: input(long, 's', true) });
    expect(expired.usage.input_tokens_details.cached_tokens).toBe(0);
  });

  it('explicit mode: nothing is cached without a breakpoint, and only up to the breakpoint with one', async () => {
    const api = chatClient(await chatEmulator('openai'));
    const prefix = words(2_000, 'e');
    const explicit = { mode: 'explicit' };
    const none = await create(api, { input: input(prefix, words(1_500, 'q')), prompt_cache_options: explicit });
    expect(none.usage.input_tokens_details.cache_write_tokens).toBe(0);
    const again = await create(api, { input: input(prefix, words(1_500, 'q')), prompt_cache_options: explicit });
    expect(again.usage.input_tokens_details.cached_tokens).toBe(0);
    // with a breakpoint on the system item: that prefix is written, the 1,500-token question is not
    const marked = await create(api, { input: input(prefix, words(1_500, 'q'), true), prompt_cache_options: explicit });
    expect(marked.usage.input_tokens_details.cache_write_tokens).toBe(2_000);
    const read = await create(api, { input: input(prefix, words(1_500, 'q'), true), prompt_cache_options: explicit });
    expect(read.usage.input_tokens_details.cached_tokens).toBe(2_000);
    expect(read.usage.input_tokens_details.cache_write_tokens).toBe(0);
  });

  it('comparison_response_id: the tokens two prompts share and the first part that differs', async () => {
    const api = chatClient(await chatEmulator('openai'));
    const prefix = words(1_200, 'c');
    const first = await create(api, { input: input(prefix, 'one') });
    const second = await create(api, {
      input: input(prefix, 'two'),
      prompt_cache_options: { comparison_response_id: first.id },
    });
    expect(second.prompt_cache_comparison).toEqual({
      response_id: first.id,
      common_prefix_tokens: 1_200,
      first_difference: 'messages.1.content.0',
    });
    const unknown = await openAiError(
      create(api, { input: 'x', prompt_cache_options: { comparison_response_id: 'resp_nope' } }),
    );
    expect(unknown.status).toBe(400);
  });

  it('refuses a TTL it does not know, naming the field', async () => {
    const api = chatClient(await chatEmulator('openai'));
    const err = await openAiError(create(api, { input: 'x', prompt_cache_options: { ttl: '1h' } }));
    expect(err.status).toBe(400);
    expect(err.message).toContain('prompt_cache_options.ttl');
  });
});

describe('streaming in the Responses event format', () => {
  it('response.created first, text deltas, then response.completed with the usage', async () => {
    const api = chatClient(await chatEmulator('openai'));
    const stream = await api.responses.create({ model: MODEL, input: 'Say hello', stream: true });
    const types: string[] = [];
    let text = '';
    let usage: unknown;
    let sequence = -1;
    for await (const event of stream) {
      types.push(event.type);
      expect(event.sequence_number).toBe(sequence + 1);
      sequence = event.sequence_number;
      if (event.type === 'response.output_text.delta') text += event.delta;
      if (event.type === 'response.completed') usage = event.response.usage;
    }
    expect(types[0]).toBe('response.created');
    expect(types).toContain('response.output_text.delta');
    expect(types.at(-1)).toBe('response.completed');
    expect(text.length).toBeGreaterThan(0);
    expect((usage as Usage).output_tokens).toBeGreaterThan(0);
  });

  it('is not served in the DashScope or DeepSeek modes (the Responses API is OpenAI’s)', async () => {
    const api = chatClient(await chatEmulator('deepseek'), 'deepseek');
    const err = await openAiError(api.responses.create({ model: 'deepseek-chat', input: 'x' }));
    expect(err.status).toBe(404);
  });
});
