import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../../src/core/util/clock.ts';
import {
  chatClient,
  chatEmulator,
  drive,
  ephemeral,
  openAiError,
  part,
  usageOf,
  waitForEvents,
  words,
} from './helpers.ts';

/*
 * DashScope's explicit cache, through the real `openai` client at /compatible-mode/v1:
 * `cache_control` on content parts (array form), ≤ 4, 20-block lookback, tool markers
 * ignored, 5-minute TTL reset on hit, creation at 125% reported as cache_creation_input_tokens.
 */

const MODEL = 'qwen3-max';
type Msg = Record<string, unknown>;
const ask = (emu: Awaited<ReturnType<typeof chatEmulator>>, messages: Msg[], extra: Record<string, unknown> = {}) =>
  chatClient(emu, 'dashscope').chat.completions.create({ model: MODEL, messages: messages as never, ...extra });

describe('DashScope explicit cache', () => {
  it('creates at the marker, then reads it: usage in prompt_tokens_details with cache_type ephemeral', async () => {
    const emu = await chatEmulator('dashscope');
    const system = { role: 'system', content: [part(words(3_000, 's'), true)] };
    const cold = await ask(emu, [system, { role: 'user', content: 'first question' }]);
    expect(usageOf(cold)).toEqual({
      prompt_tokens: 3_002,
      completion_tokens: expect.any(Number),
      total_tokens: expect.any(Number),
      prompt_tokens_details: {
        cached_tokens: 0,
        cache_creation: { ephemeral_5m_input_tokens: 3_000 },
        cache_creation_input_tokens: 3_000,
        cache_type: 'ephemeral',
      },
    });
    const warm = await ask(emu, [system, { role: 'user', content: 'second question' }]);
    expect(usageOf(warm).prompt_tokens_details).toEqual({
      cached_tokens: 3_000,
      cache_creation: { ephemeral_5m_input_tokens: 0 },
      cache_creation_input_tokens: 0,
      cache_type: 'ephemeral',
    });
  });

  it('caches nothing without markers (string content cannot carry one), and nothing below 1,024 tokens', async () => {
    const emu = await chatEmulator('dashscope');
    const plain = [
      { role: 'system', content: words(3_000, 'n') },
      { role: 'user', content: 'q' },
    ];
    await ask(emu, plain);
    expect(usageOf(await ask(emu, plain)).prompt_tokens_details).toEqual({ cached_tokens: 0 });
    const small = [
      { role: 'system', content: [part(words(1_000, 'x'), true)] },
      { role: 'user', content: 'q' },
    ];
    await ask(emu, small);
    expect(usageOf(await ask(emu, small)).prompt_tokens_details).toMatchObject({
      cached_tokens: 0,
      cache_creation_input_tokens: 0,
    });
  });

  it('refuses a fifth marker with a 400 naming the part', async () => {
    const emu = await chatEmulator('dashscope');
    const messages = [1, 2, 3, 4, 5].map((i) => ({ role: 'user', content: [part(`block ${i}`, true)] }));
    const err = await openAiError(ask(emu, messages));
    expect(err.status).toBe(400);
    expect(err.error).toMatchObject({
      type: 'invalid_request_error',
      code: 'too_many_cache_markers',
      param: 'messages[4].content[0]',
    });
    expect(err.message).toMatch(/A maximum of 4 content parts with cache_control/);
  });

  it('ignores markers on tools (neither counted toward the 4 nor written)', async () => {
    const emu = await chatEmulator('dashscope');
    const tool = (i: number) => ({
      type: 'function',
      function: {
        name: `tool_${i}`,
        description: words(400, `t${i}-`),
        parameters: { type: 'object', properties: {} },
      },
      cache_control: ephemeral,
    });
    const tools = [1, 2, 3, 4, 5].map(tool);
    const messages = [{ role: 'user', content: [part('a question', true)] }];
    const cold = await ask(emu, messages, { tools });
    expect(usageOf(cold).prompt_tokens_details.cache_creation_input_tokens).toBe(usageOf(cold).prompt_tokens);
    expect(emu.cacheEntries()).toHaveLength(1); // the user part's marker only
  });

  it('looks back 20 blocks from a marker and no further', async () => {
    const emu = await chatEmulator('dashscope');
    const text = words(2_000, 'h');
    // Later requests carry no marker on the head: only the last part's marker can find it.
    const head = { role: 'system', content: [part(text)] };
    const filler = (n: number) => Array.from({ length: n }, (_, i) => ({ role: 'user', content: `filler ${i}` }));
    await ask(emu, [
      { role: 'system', content: [part(text, true)] },
      { role: 'user', content: 'seed' },
    ]);
    // The marker's own block plus 18 fillers: the head is the 20th block back.
    const near = await ask(emu, [head, ...filler(18), { role: 'user', content: [part('near', true)] }]);
    expect(usageOf(near).prompt_tokens_details.cached_tokens).toBe(2_000);
    const far = await ask(emu, [head, ...filler(19), { role: 'user', content: [part('far', true)] }]);
    expect(usageOf(far).prompt_tokens_details.cached_tokens).toBe(0);
  });

  it('keeps an entry 5 minutes, and a hit restarts the 5 minutes (injected clock)', async () => {
    const clock = new ManualClock(5_000_000);
    const emu = await chatEmulator('dashscope', { clock });
    const messages = (q: string) => [
      { role: 'system', content: [part(words(2_000, 'k'), true)] },
      { role: 'user', content: q },
    ];
    await ask(emu, messages('a'));
    clock.advance(5 * 60_000 - 1);
    expect(usageOf(await ask(emu, messages('b'))).prompt_tokens_details.cached_tokens).toBe(2_000);
    clock.advance(5 * 60_000 - 1); // almost 10 minutes after the write: alive thanks to the hit
    expect(usageOf(await ask(emu, messages('c'))).prompt_tokens_details.cached_tokens).toBe(2_000);
    clock.advance(5 * 60_000);
    const expired = usageOf(await ask(emu, messages('d'))).prompt_tokens_details;
    expect(expired).toMatchObject({ cached_tokens: 0, cache_creation_input_tokens: 2_000 });
  });

  it('makes a created entry readable only once its response is complete: a sibling sent before that creates again', async () => {
    const clock = new ManualClock();
    const emu = await chatEmulator('dashscope', {
      clock,
      latency: { baseMs: 100, prefillMsPerToken: 0, cacheReadMsPerToken: 0, outputTokensPerSecond: 10 },
    });
    const messages = (q: string) => [
      { role: 'system', content: [part(words(2_000, 'c'), true)] },
      { role: 'user', content: q },
    ];
    const begun = waitForEvents(emu, 'response-start');
    const first = ask(emu, messages('first'));
    await drive(clock, begun); // its response has begun; the body is still being generated
    const planned = waitForEvents(emu, 'request-start');
    const sibling = ask(emu, messages('sibling'));
    expect((await planned)[0]!.usage).toMatchObject({ cache_read_input_tokens: 0, cache_creation_input_tokens: 2_000 });
    const [, early] = await drive(clock, Promise.all([first, sibling]));
    expect(usageOf(early).prompt_tokens_details).toMatchObject({
      cached_tokens: 0,
      cache_creation_input_tokens: 2_000,
    });
    const late = await drive(clock, ask(emu, messages('late')));
    expect(usageOf(late).prompt_tokens_details).toMatchObject({ cached_tokens: 2_000, cache_creation_input_tokens: 0 });
  });

  it("serves the same API at /v1 and accepts Qwen Code's X-DashScope-CacheControl header without needing it", async () => {
    const emu = await chatEmulator('dashscope');
    const messages = [
      { role: 'system', content: [part(words(1_500, 'q'), true)] },
      { role: 'user', content: 'q' },
    ];
    await chatClient(emu, 'openai', {
      defaultHeaders: { 'X-DashScope-CacheControl': 'enable' },
    }).chat.completions.create({ model: MODEL, messages: messages as never });
    const again = await ask(emu, messages);
    expect(usageOf(again).prompt_tokens_details.cached_tokens).toBe(1_500);
  });
});
