import type Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { MODEL, apiError, cc, client, emulator, rawPost } from './helpers.ts';

type Params = Anthropic.MessageCreateParamsNonStreaming;
const base: Params = { model: MODEL, max_tokens: 50, messages: [{ role: 'user', content: 'hello' }] };
const toolUse = (id: string): Anthropic.ToolUseBlockParam => ({
  type: 'tool_use',
  id,
  name: 'read_file',
  input: { path: 'a' },
});
const toolResult = (id: string): Anthropic.ToolResultBlockParam => ({
  type: 'tool_result',
  tool_use_id: id,
  content: 'text',
});
const tools: Anthropic.Tool[] = [{ name: 'read_file', input_schema: { type: 'object' } }];

async function rejects(api: Anthropic, params: Params | Anthropic.MessageCreateParamsStreaming, status = 400) {
  const err = await apiError(api.messages.create(params as Params));
  expect(err.status).toBe(status);
  expect(err.error).toMatchObject({
    type: 'error',
    error: { type: expect.any(String), message: expect.any(String) },
    request_id: expect.stringMatching(/^req_/),
  });
  expect(err.requestID).toBe((err.error as { request_id: string }).request_id);
  return err;
}

describe('request validation', () => {
  it('names missing or malformed fields', async () => {
    const api = client(await emulator());
    const err = await rejects(api, { model: MODEL, messages: base.messages } as Params);
    expect(err.type).toBe('invalid_request_error');
    expect(err.apiMessage).toContain('max_tokens');
    expect((await rejects(api, { ...base, messages: [] })).apiMessage).toContain('messages');
    expect(
      (await rejects(api, { ...base, messages: [{ role: 'user', content: [{ type: 'text', text: '' }] }] })).apiMessage,
    ).toBe('messages.0.content.0.text: text content blocks must be non-empty');
  });

  it('requires the user first; consecutive messages of one role are combined into one turn, as the API does', async () => {
    const api = client(await emulator());
    expect((await rejects(api, { ...base, messages: [{ role: 'assistant', content: 'hi' }] })).apiMessage).toContain(
      'first message',
    );
    const twice = await api.messages.create({
      ...base,
      messages: [
        { role: 'user', content: 'a' },
        { role: 'user', content: 'b' },
      ],
    } as Parameters<typeof api.messages.create>[0]);
    expect((twice as { type: string }).type).toBe('message');
  });

  it('requires every tool_use to be answered in the next message, and every tool_result to answer one', async () => {
    const api = client(await emulator());
    const dangling = await rejects(api, {
      ...base,
      tools,
      messages: [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: [toolUse('toolu_1'), toolUse('toolu_2')] },
        { role: 'user', content: [toolResult('toolu_1')] },
      ],
    });
    expect(dangling.apiMessage).toContain(
      '`tool_use` ids were found without `tool_result` blocks immediately after: toolu_2',
    );
    const stray = await rejects(api, {
      ...base,
      tools,
      messages: [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: [toolUse('toolu_1')] },
        { role: 'user', content: [toolResult('toolu_1'), toolResult('toolu_9')] },
      ],
    });
    expect(stray.apiMessage).toBe(
      'messages.2.content.1: unexpected `tool_use_id` found in `tool_result` blocks: toolu_9. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.',
    );
    const ok = await api.messages.create({
      ...base,
      tools,
      messages: [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: [toolUse('toolu_1')] },
        { role: 'user', content: [toolResult('toolu_1')] },
      ],
    });
    expect(ok.type).toBe('message');
  });

  it('pairs tool_use and tool_result across combined turns: two assistant messages, then two user ones', async () => {
    const api = client(await emulator());
    const ok = await api.messages.create({
      ...base,
      tools,
      messages: [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: [toolUse('toolu_1')] },
        { role: 'assistant', content: [toolUse('toolu_2')] },
        { role: 'user', content: [toolResult('toolu_1')] },
        { role: 'user', content: [toolResult('toolu_2')] },
      ],
    });
    expect(ok.type).toBe('message');
    const late = await rejects(api, {
      ...base,
      tools,
      messages: [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: [toolUse('toolu_1')] },
        { role: 'user', content: 'no result' },
        { role: 'assistant', content: 'then' },
        { role: 'user', content: [toolResult('toolu_1')] },
      ],
    });
    expect(late.apiMessage).toContain(
      'messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1',
    );
  });

  it('rejects a fifth cache marker and a 1h marker after a 5m one', async () => {
    const api = client(await emulator());
    const five = Array.from({ length: 5 }, (_, i): Anthropic.TextBlockParam => ({
      type: 'text',
      text: `block ${i}`,
      cache_control: cc,
    }));
    expect((await rejects(api, { ...base, messages: [{ role: 'user', content: five }] })).apiMessage).toBe(
      'A maximum of 4 blocks with cache_control may be provided. Found 5.',
    );
    const order = await rejects(api, {
      ...base,
      system: [{ type: 'text', text: 'sys', cache_control: cc }],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'x', cache_control: { type: 'ephemeral', ttl: '1h' } }] },
      ],
    });
    expect(order.apiMessage).toContain('ttl "1h" cannot come after one with ttl "5m"');
  });

  it('allows max_tokens 0 only without stream, thinking or a forced tool_choice', async () => {
    const api = client(await emulator());
    const zero = { ...base, max_tokens: 0 };
    expect((await rejects(api, { ...zero, stream: true })).apiMessage).toContain('stream');
    expect((await rejects(api, { ...zero, thinking: { type: 'enabled', budget_tokens: 1024 } })).apiMessage).toContain(
      'thinking',
    );
    expect((await rejects(api, { ...zero, tools, tool_choice: { type: 'any' } })).apiMessage).toContain('tool_choice');
    expect(
      (await rejects(api, { ...zero, tools, tool_choice: { type: 'tool', name: 'read_file' } })).apiMessage,
    ).toContain('tool_choice');
    expect((await api.messages.create({ ...zero, tools, tool_choice: { type: 'auto' } })).stop_reason).toBe(
      'max_tokens',
    );
  });

  it('answers an unknown model with 404 not_found_error', async () => {
    const api = client(await emulator());
    const err = await rejects(api, { ...base, model: 'claude-nonexistent-9' }, 404);
    expect(err).toMatchObject({ type: 'not_found_error', apiMessage: 'model: claude-nonexistent-9' });
    expect((await api.messages.create({ ...base, model: 'claude-sonnet-4-6-20260101' })).model).toBe(
      'claude-sonnet-4-6-20260101',
    );
  });

  it('answers a body over the limit with 413 request_too_large', async () => {
    const api = client(await emulator({ maxBodyBytes: 2048 }));
    const err = await rejects(api, { ...base, messages: [{ role: 'user', content: 'x'.repeat(4096) }] }, 413);
    expect(err.type).toBe('request_too_large');
  });

  it('accepts both auth styles and both API versions; rejects a missing key or version', async () => {
    const emu = await emulator();
    const body = JSON.stringify(base);
    expect(
      (await rawPost(emu, '/v1/messages', body, { 'x-api-key': 'k', 'anthropic-version': '2023-06-01' })).status,
    ).toBe(200);
    expect(
      (
        await rawPost(emu, '/v1/messages', body, {
          'x-api-key': '',
          authorization: 'Bearer k',
          'anthropic-version': '2026-10-21',
        })
      ).status,
    ).toBe(200);
    const noKey = await rawPost(emu, '/v1/messages', body, { 'x-api-key': '' });
    expect(noKey.status).toBe(401);
    expect(await noKey.json()).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
    expect((await rawPost(emu, '/v1/messages', body, { 'anthropic-version': '' })).status).toBe(400);
    expect((await rawPost(emu, '/v1/messages', '{not json')).status).toBe(400);
    const locked = await emulator({ apiKey: 'secret' });
    expect((await apiError(client(locked).messages.create(base))).status).toBe(401);
    expect((await client(locked, { apiKey: 'secret' }).messages.create(base)).type).toBe('message');
  });

  it('rejects sampling parameters under anthropic-version 2026-10-21 only', async () => {
    const emu = await emulator();
    const body = JSON.stringify({ ...base, temperature: 0.5 });
    expect((await rawPost(emu, '/v1/messages', body, { 'anthropic-version': '2023-06-01' })).status).toBe(200);
    const res = await rawPost(emu, '/v1/messages', body, { 'anthropic-version': '2026-10-21' });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toContain('temperature');
  });

  it('answers unknown routes with 404 in the API shape', async () => {
    const emu = await emulator();
    const res = await rawPost(emu, '/v1/complete', '{}');
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });
  });
});
