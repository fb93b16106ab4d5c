import type Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/util/clock.ts';
import { MODEL, cc, cc1h, client, emulator, words } from './helpers.ts';

type Params = Anthropic.MessageCreateParamsNonStreaming;

const SYSTEM = words(40, 'sys');

function params(extra: Partial<Params> = {}): Params {
  return {
    model: MODEL,
    max_tokens: 64,
    system: [{ type: 'text', text: SYSTEM, cache_control: cc }],
    messages: [{ role: 'user', content: [{ type: 'text', text: words(5, 'ask') }] }],
    ...extra,
  };
}

describe('prompt cache through the SDK', () => {
  it('writes, then reads, with usage in the final message and in message_start', async () => {
    const api = client(await emulator());
    const first = await api.messages.create(params());
    expect(first.usage).toMatchObject({
      input_tokens: 5,
      cache_creation_input_tokens: 40,
      cache_read_input_tokens: 0,
      cache_creation: { ephemeral_5m_input_tokens: 40, ephemeral_1h_input_tokens: 0 },
    });
    const stream = await api.messages.create({ ...params(), stream: true });
    let startUsage: Anthropic.Usage | undefined;
    for await (const event of stream) if (event.type === 'message_start') startUsage = event.message.usage;
    expect(startUsage).toMatchObject({ input_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 40 });
    const final = await api.messages.stream(params()).finalMessage();
    expect(final.usage).toMatchObject({
      input_tokens: 5,
      cache_read_input_tokens: 40,
      output_tokens: first.usage.output_tokens,
    });
  });

  it('hits when requests differ only in cache_control, misses on one changed byte', async () => {
    const api = client(await emulator());
    await api.messages.create(params());
    const moved = params({
      system: [{ type: 'text', text: SYSTEM, cache_control: { type: 'ephemeral', ttl: '5m' } }],
      messages: [{ role: 'user', content: [{ type: 'text', text: words(5, 'other'), cache_control: cc }] }],
    });
    expect((await api.messages.create(moved)).usage.cache_read_input_tokens).toBe(40);
    const oneByte = params({ system: [{ type: 'text', text: `${SYSTEM}.`, cache_control: cc }] });
    expect((await api.messages.create(oneByte)).usage).toMatchObject({
      cache_read_input_tokens: 0,
      cache_creation_input_tokens: 40,
    });
  });

  it('starts from scratch for another model', async () => {
    const api = client(await emulator());
    await api.messages.create(params());
    expect((await api.messages.create(params({ model: 'claude-opus-4-8' }))).usage.cache_read_input_tokens).toBe(0);
  });

  it('keeps the system part across a tool_choice change, not the messages part', async () => {
    const api = client(await emulator());
    const tools: Anthropic.Tool[] = [{ name: 'read_file', input_schema: { type: 'object' } }];
    const convo = (choice: Anthropic.ToolChoice) =>
      params({
        tools,
        tool_choice: choice,
        messages: [{ role: 'user', content: [{ type: 'text', text: words(30, 'long'), cache_control: cc }] }],
      });
    const first = await api.messages.create(convo({ type: 'auto' }));
    const system = first.usage.cache_creation_input_tokens! - 30;
    expect((await api.messages.create(convo({ type: 'auto' }))).usage.cache_read_input_tokens).toBe(system + 30);
    expect((await api.messages.create(convo({ type: 'any' }))).usage).toMatchObject({
      cache_read_input_tokens: system,
      cache_creation_input_tokens: 30,
    });
  });

  it('applies the top-level automatic cache_control to the last block', async () => {
    const api = client(await emulator());
    const auto = { ...params({ system: SYSTEM }), cache_control: cc } as Params;
    expect((await api.messages.create(auto)).usage).toMatchObject({ cache_creation_input_tokens: 45, input_tokens: 0 });
    expect((await api.messages.create(auto)).usage).toMatchObject({ cache_read_input_tokens: 45, input_tokens: 0 });
  });

  it('splits cache creation by TTL', async () => {
    const api = client(await emulator());
    const mixed = params({
      system: [{ type: 'text', text: SYSTEM, cache_control: cc1h }],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: words(20, 'msg'), cache_control: cc },
            { type: 'text', text: 'tail' },
          ],
        },
      ],
    });
    expect((await api.messages.create(mixed)).usage).toMatchObject({
      input_tokens: 1,
      cache_creation_input_tokens: 60,
      cache_creation: { ephemeral_1h_input_tokens: 40, ephemeral_5m_input_tokens: 20 },
    });
  });

  it('uses the model table minimum (and its override)', async () => {
    // undefined clears the helper's small test minimum: the model table's values apply.
    const api = client(await emulator({ minCacheableTokens: undefined as unknown as number }));
    const sized = (n: number, model = MODEL) =>
      params({ model, system: [{ type: 'text', text: words(n, `s${n}`), cache_control: cc }] });
    expect((await api.messages.create(sized(1023))).usage).toMatchObject({
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      input_tokens: 1028,
    });
    expect((await api.messages.create(sized(1024))).usage).toMatchObject({ cache_creation_input_tokens: 1024 });
    expect((await api.messages.create(sized(2000, 'claude-haiku-4-5'))).usage.cache_creation_input_tokens).toBe(0);
    const override = client(await emulator({ minCacheableTokens: { 'claude-haiku-4-5': 100 } }));
    expect((await override.messages.create(sized(2000, 'claude-haiku-4-5'))).usage.cache_creation_input_tokens).toBe(
      2000,
    );
  });

  it('expires entries by the injected clock; hits refresh the lifetime', async () => {
    const clock = new ManualClock(0);
    const api = client(await emulator({ clock }));
    await api.messages.create(params());
    clock.advance(200_000);
    expect((await api.messages.create(params())).usage.cache_read_input_tokens).toBe(40);
    clock.advance(200_000);
    expect((await api.messages.create(params())).usage.cache_read_input_tokens).toBe(40);
    clock.advance(300_000);
    expect((await api.messages.create(params())).usage).toMatchObject({
      cache_read_input_tokens: 0,
      cache_creation_input_tokens: 40,
    });
  });
});

describe('cache diagnostics through the SDK', () => {
  const convo = (system = SYSTEM, first = 'first question') =>
    params({
      system: [{ type: 'text', text: system, cache_control: cc }],
      messages: [{ role: 'user', content: first }],
    });

  it('names what diverged from the previous request', async () => {
    const api = client(await emulator());
    const prev = await api.messages.create(convo());
    const ask = async (p: Params) =>
      (await api.messages.create({ ...p, diagnostics: { previous_message_id: prev.id } })).diagnostics;
    const appended = convo();
    appended.messages.push(
      { role: 'assistant', content: prev.content as Anthropic.TextBlockParam[] },
      { role: 'user', content: 'next' },
    );
    expect(await ask(appended)).toBeNull();
    expect(await ask(convo(`${SYSTEM} extra`))).toEqual({
      cache_miss_reason: { type: 'system_changed', cache_missed_input_tokens: 40 },
    });
    expect((await ask(convo(SYSTEM, 'another first question')))?.cache_miss_reason?.type).toBe('messages_changed');
    expect((await ask({ ...convo(), model: 'claude-opus-4-8' }))?.cache_miss_reason?.type).toBe('model_changed');
    expect(
      (await ask({ ...convo(), tools: [{ name: 'x', input_schema: { type: 'object' } }] }))?.cache_miss_reason?.type,
    ).toBe('tools_changed');
    expect(
      (await ask({ ...convo(), thinking: { type: 'enabled', budget_tokens: 1024 }, max_tokens: 2048 }))
        ?.cache_miss_reason?.type,
    ).toBe('unavailable');
    const unknown = await api.messages.create({ ...convo(), diagnostics: { previous_message_id: 'msg_unknown' } });
    expect(unknown.diagnostics).toEqual({ cache_miss_reason: { type: 'previous_message_not_found' } });
    expect(
      (await api.messages.create({ ...convo(), diagnostics: { previous_message_id: null } })).diagnostics,
    ).toBeNull();
  });
});
