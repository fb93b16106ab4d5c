import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../../src/core/util/clock.ts';
import { mergeCatalogue } from '../../../../src/core/models/catalogue.ts';
import { chatClient, chatEmulator, openAiError } from './helpers.ts';

/* The Chat Completions wire: SSE framing, JSON shape, errors, rate-limit headers, models. */

const MODEL = 'gpt-5';
const messages = [{ role: 'user' as const, content: 'hello there' }];

async function rawPost(
  url: string,
  body: unknown,
  headers: Record<string, string> = { authorization: 'Bearer test' },
): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

describe('streaming', () => {
  it('frames chunks as bare data: lines, usage last with empty choices, then [DONE]', async () => {
    const emu = await chatEmulator('openai');
    const res = await rawPost(`${emu.url}/v1/chat/completions`, {
      model: MODEL,
      messages,
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const text = await res.text();
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
    const frames = text.split('\n\n').filter(Boolean);
    expect(frames.every((f) => f.startsWith('data: ') && !f.includes('\nevent:'))).toBe(true);
    const chunks = frames.slice(0, -1).map((f) => JSON.parse(f.slice(6)));
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
    expect(chunks[0]).toMatchObject({
      object: 'chat.completion.chunk',
      model: MODEL,
      choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }],
      usage: null,
    });
    const last = chunks.at(-1);
    expect(last).toMatchObject({ choices: [], usage: { prompt_tokens: 2, completion_tokens: expect.any(Number) } });
    expect(chunks.at(-2)).toMatchObject({ choices: [{ delta: {}, finish_reason: 'stop' }], usage: null });
    const content = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
    const whole = await chatClient(emu).chat.completions.create({ model: MODEL, messages });
    expect(content).toBe(whole.choices[0]!.message.content);
  });

  it('sends no usage field at all without stream_options.include_usage', async () => {
    const emu = await chatEmulator('openai');
    const text = await (
      await rawPost(`${emu.url}/v1/chat/completions`, { model: MODEL, messages, stream: true })
    ).text();
    expect(text).not.toContain('"usage"');
  });

  it('fails mid-stream with an error frame the SDK raises', async () => {
    const emu = await chatEmulator('openai');
    const stream = await chatClient(emu, 'openai', {
      defaultHeaders: { 'x-forkcache-fault': 'stream-error' },
    }).chat.completions.create({ model: MODEL, messages, stream: true });
    const err = await openAiError(
      (async () => {
        for await (const _ of stream) void _;
      })(),
    );
    expect(err.message).toMatch(/server had an error/);
  });
});

describe('the JSON response', () => {
  it('is a chat.completion with one choice, finish_reason stop and a chatcmpl- id', async () => {
    const done = await chatClient(await chatEmulator('openai')).chat.completions.create({ model: MODEL, messages });
    expect(done).toMatchObject({
      object: 'chat.completion',
      model: MODEL,
      choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', refusal: null } }],
    });
    expect(done.id).toMatch(/^chatcmpl-/);
    expect(done.usage!.total_tokens).toBe(done.usage!.prompt_tokens + done.usage!.completion_tokens);
  });

  it('stops at max_completion_tokens with finish_reason length', async () => {
    const done = await chatClient(await chatEmulator('openai')).chat.completions.create({
      model: MODEL,
      messages,
      max_completion_tokens: 3,
    });
    expect(done.choices[0]!.finish_reason).toBe('length');
    expect(done.usage!.completion_tokens).toBe(3);
  });
});

describe('errors, in the OpenAI shape', () => {
  it('401 without a key, and with the wrong one when a key is set', async () => {
    const open = await chatEmulator('openai');
    const res = await rawPost(`${open.url}/v1/chat/completions`, { model: MODEL, messages }, {});
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({
      error: {
        message: expect.stringMatching(/didn't provide an API key/),
        type: 'invalid_request_error',
        param: null,
        code: null,
      },
    });
    const locked = await chatEmulator('openai', { apiKey: 'right' });
    const err = await openAiError(
      chatClient(locked, 'openai', { apiKey: 'wrong' }).chat.completions.create({ model: MODEL, messages }),
    );
    expect(err).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(err.code).toBe('invalid_api_key');
  });

  it('400 naming the parameter: missing, wrong type, unsupported n, bad JSON', async () => {
    const api = chatClient(await chatEmulator('openai'));
    const missing = await openAiError(api.chat.completions.create({ model: MODEL } as never));
    expect(missing.error).toMatchObject({
      type: 'invalid_request_error',
      param: 'messages',
      code: 'missing_required_parameter',
    });
    const role = await openAiError(
      api.chat.completions.create({ model: MODEL, messages: [{ role: 'robot', content: 'x' }] } as never),
    );
    expect(role.error).toMatchObject({ param: 'messages[0].role', code: 'invalid_value' });
    const tool = await openAiError(
      api.chat.completions.create({ model: MODEL, messages: [{ role: 'tool', content: 'x' }] } as never),
    );
    expect(tool.error).toMatchObject({ param: 'messages[0].tool_call_id' });
    expect((await openAiError(api.chat.completions.create({ model: MODEL, messages, n: 2 }))).error).toMatchObject({
      param: 'n',
    });
    const emu = await chatEmulator('openai');
    const bad = await rawPost(`${emu.url}/v1/chat/completions`, '{"model":');
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { message: string } }).error.message).toMatch(
      /could not parse the JSON body/,
    );
  });

  it('404 for an unknown path and for a retired model', async () => {
    const modelTable = mergeCatalogue({
      date: '2026-11-30',
      models: [{ id: 'qwen-old', provider: 'dashscope', status: 'retired', replacement: 'qwen3-max' }],
    });
    const emu = await chatEmulator('dashscope', { modelTable });
    const res = await fetch(`${emu.url}/v2/chat`, { headers: { authorization: 'Bearer test' } });
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { message: string } }).error.message).toBe('Invalid URL (GET /v2/chat)');
    const err = await openAiError(
      chatClient(emu, 'dashscope').chat.completions.create({ model: 'qwen-old', messages }),
    );
    expect(err.status).toBe(404);
    expect(err.code).toBe('model_not_found');
  });

  it('429 with retry-after and the x-ratelimit-* headers from the shared limiter', async () => {
    const rateLimits = { classes: { 'gpt-5': { rpm: 2, itpm: 100_000, otpm: 100_000 } } };
    const emu = await chatEmulator('openai', { rateLimits, clock: new ManualClock(1_000_000) });
    const api = chatClient(emu);
    const { response } = await api.chat.completions.create({ model: MODEL, messages }).withResponse();
    expect(response.headers.get('x-ratelimit-limit-requests')).toBe('2');
    expect(response.headers.get('x-ratelimit-remaining-requests')).toBe('1');
    expect(response.headers.get('x-ratelimit-reset-requests')).toBe('30s');
    expect(response.headers.get('x-ratelimit-limit-tokens')).toBe('100000');
    expect([...response.headers.keys()].some((h) => h.startsWith('anthropic-'))).toBe(false);
    await api.chat.completions.create({ model: MODEL, messages });
    const err = await openAiError(api.chat.completions.create({ model: MODEL, messages }));
    expect(err.status).toBe(429);
    expect(err.error).toMatchObject({ type: 'requests', code: 'rate_limit_exceeded' });
    expect(err.headers?.get('retry-after')).toBe('30');
    expect(err.headers?.get('x-ratelimit-remaining-requests')).toBe('0');
  });
});

describe('GET /v1/models', () => {
  it("lists the catalogue models of the mode's provider", async () => {
    const openai = await chatClient(await chatEmulator('openai')).models.list();
    expect(openai.data.map((m) => m.id)).toEqual(['gpt-5', 'gpt-4.1']);
    expect(openai.data[0]).toMatchObject({ object: 'model', owned_by: 'openai' });
    const qwen = await chatClient(await chatEmulator('dashscope'), 'dashscope').models.list();
    expect(qwen.data.map((m) => m.id)).toEqual(['qwen3-max', 'qwen3-coder-plus', 'qwen-plus']);
  });
});
