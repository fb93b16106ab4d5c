import { describe, expect, it } from 'vitest';
import { cc, emulator, rawPost, words } from './helpers.ts';

/*
 * Request shapes of API 2026-10-21 (the SDK 1.14 declarations): system turns in `messages`,
 * thinking variants with `display`, `cache_control.scope`, `diagnostics`, `context_management`,
 * `output_config`, `speed`, `inference_geo`; unknown fields refused alike at every level.
 */

const CURRENT = 'claude-opus-5-5';
type Body = Record<string, unknown>;

async function post(
  body: Body,
  headers: Record<string, string> = {},
): Promise<{ status: number; json: Record<string, any> }> {
  const emu = await emulator();
  const res = await rawPost(emu, '/v1/messages', JSON.stringify(body), headers);
  return { status: res.status, json: (await res.json()) as Record<string, any> };
}

const base = (extra: Body = {}): Body => ({
  model: CURRENT,
  max_tokens: 100,
  messages: [{ role: 'user', content: 'hello' }],
  ...extra,
});

describe('API 2026-10-21 request shapes', () => {
  it('accepts system turns in messages, with markers on their blocks and a per-message output_config', async () => {
    const emu = await emulator();
    const body = {
      model: CURRENT,
      max_tokens: 100,
      system: [{ type: 'text', text: words(20, 's') }],
      messages: [
        { role: 'user', content: [{ type: 'text', text: words(20, 'u') }] },
        {
          role: 'system',
          content: [{ type: 'text', text: words(20, 'e'), cache_control: cc }],
          output_config: { effort: 'low' },
          clear_at: 'never',
        },
      ],
    };
    const first = await rawPost(emu, '/v1/messages', JSON.stringify(body), { 'anthropic-version': '2026-10-21' });
    expect(first.status).toBe(200);
    expect(
      ((await first.json()) as { usage: { cache_creation_input_tokens: number } }).usage.cache_creation_input_tokens,
    ).toBe(60);
    // The system turn's block is a cache position: the same prefix reads what the first wrote.
    const again = (await (await rawPost(emu, '/v1/messages', JSON.stringify(body))).json()) as {
      usage: { cache_read_input_tokens: number };
    };
    expect(again.usage.cache_read_input_tokens).toBe(60);
  });

  it('places system turns as the API does, in its words', async () => {
    const first = await post(
      base({
        messages: [
          { role: 'system', content: 'x' },
          { role: 'user', content: 'hi' },
        ],
      }),
    );
    expect(first.status).toBe(400);
    expect(first.json.error.message).toBe(
      'messages.0: use the top-level "system" parameter for the initial system prompt',
    );
    const afterAssistant = await post(
      base({
        messages: [
          { role: 'user', content: 'a' },
          { role: 'assistant', content: 'b' },
          { role: 'system', content: 'c' },
        ],
      }),
    );
    expect(afterAssistant.json.error.message).toBe('messages.2: role "system" must follow a user message');
    const empty = await post(base({ messages: [{ role: 'user', content: 'a' }, { role: 'system' }] }));
    expect(empty.json.error.message).toBe('messages.1: a system message needs content or output_config');
  });

  it('refuses system turns on a model without them with the error_code clients fall back on', async () => {
    const { status, json } = await post(
      base({
        model: 'claude-opus-4-7',
        messages: [
          { role: 'user', content: 'a' },
          { role: 'system', content: 'b' },
        ],
      }),
    );
    expect(status).toBe(400);
    expect(json.error.details).toEqual({ error_code: 'mid_conversation_system_not_supported' });
    expect(json.error.message).toContain('Unexpected role "system"');
    expect(json.error.message).toContain('input message role');
  });

  it('accepts every thinking variant with display and block_binding, cache_control.scope, and the newer top-level fields', async () => {
    const thinkings = [
      { type: 'adaptive', display: 'omitted' },
      { type: 'adaptive', display: 'summarized', block_binding: { prefix_mismatch_behavior: 'drop_block' } },
      { type: 'between_tools' },
    ];
    for (const thinking of thinkings) expect((await post(base({ thinking }))).status).toBe(200);
    // enabled/disabled: refused on the always-adaptive model, accepted (with display) elsewhere.
    expect(
      (
        await post(
          base({
            model: 'claude-sonnet-4-6',
            thinking: { type: 'enabled', budget_tokens: 1024, display: 'summarized' },
            max_tokens: 2048,
          }),
        )
      ).status,
    ).toBe(200);
    const extras = base({
      system: [{ type: 'text', text: 'rules', cache_control: { type: 'ephemeral', scope: 'global' } }],
      diagnostics: { previous_message_id: null },
      context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
      output_config: { effort: 'xhigh' },
      speed: 'fast',
      inference_geo: 'us',
      metadata: { user_id: 'u' },
    });
    const answered = await post(extras);
    expect(answered.status).toBe(200);
    expect(answered.json.usage).toMatchObject({
      speed: 'fast',
      inference_geo: 'us',
      service_tier: 'standard',
      server_tool_use: null,
    });
    expect(answered.json.usage.output_tokens_details.thinking_tokens).toBeGreaterThan(0); // an always-adaptive model thinks
  });

  it('refuses unknown fields alike at every level, in the API wording', async () => {
    const cases: [Body, string][] = [
      [base({ surprise: 1 }), 'surprise: Extra inputs are not permitted'],
      [
        base({ messages: [{ role: 'user', content: 'a', surprise: 1 }] }),
        'messages.0.surprise: Extra inputs are not permitted',
      ],
      [
        base({ messages: [{ role: 'user', content: [{ type: 'text', text: 'a', surprise: 1 }] }] }),
        'messages.0.content.0.surprise: Extra inputs are not permitted',
      ],
      [
        base({ system: [{ type: 'text', text: 'a', cache_control: { type: 'ephemeral', surprise: 1 } }] }),
        'system.0.cache_control.surprise: Extra inputs are not permitted',
      ],
      [base({ thinking: { type: 'adaptive', surprise: 1 } }), 'thinking.surprise: Extra inputs are not permitted'],
      [
        base({ tools: [{ name: 't', input_schema: { type: 'object' }, surprise: 1 }] }),
        'tools.0.surprise: Extra inputs are not permitted',
      ],
      [
        base({ output_config: { effort: 'low', surprise: 1 } }),
        'output_config.surprise: Extra inputs are not permitted',
      ],
    ];
    for (const [body, message] of cases) {
      const { status, json } = await post(body);
      expect(status).toBe(400);
      expect(json.error.message).toBe(message);
    }
  });

  it('a speed change invalidates system and messages but not the tools', async () => {
    const emu = await emulator();
    const body = (speed: string): string =>
      JSON.stringify({
        model: CURRENT,
        max_tokens: 100,
        speed,
        tools: [{ name: 'tool', description: words(20, 't'), input_schema: { type: 'object' }, cache_control: cc }],
        system: [{ type: 'text', text: words(20, 's'), cache_control: cc }],
        messages: [{ role: 'user', content: [{ type: 'text', text: words(20, 'u'), cache_control: cc }] }],
      });
    await rawPost(emu, '/v1/messages', body('standard'));
    const fast = (await (await rawPost(emu, '/v1/messages', body('fast'))).json()) as {
      usage: { cache_read_input_tokens: number; cache_creation_input_tokens: number };
    };
    expect(fast.usage.cache_read_input_tokens).toBeGreaterThan(0);
    expect(fast.usage.cache_read_input_tokens).toBeLessThan(40); // the tools only
    const standard = (await (await rawPost(emu, '/v1/messages', body('standard'))).json()) as {
      usage: { cache_read_input_tokens: number };
    };
    expect(standard.usage.cache_read_input_tokens).toBeGreaterThan(fast.usage.cache_read_input_tokens);
  });

  it("a system turn's own effort renders from that turn on; clear_at next_user_message drops it from the prompt later", async () => {
    const emu = await emulator();
    const turn = (extra: Body) => ({ role: 'system', content: [{ type: 'text', text: words(20, 'e') }], ...extra });
    const send = async (messages: unknown[]) =>
      (
        (await (
          await rawPost(emu, '/v1/messages', JSON.stringify({ model: CURRENT, max_tokens: 100, messages }))
        ).json()) as { usage: Record<string, number> }
      ).usage;
    const user = { role: 'user', content: [{ type: 'text', text: words(20, 'u'), cache_control: cc }] };
    const tail = (extra: Body) => [
      user,
      { ...turn(extra), content: [{ type: 'text', text: words(20, 'e'), cache_control: cc }] },
    ];
    await send(tail({ output_config: { effort: 'low' } }));
    expect((await send(tail({ output_config: { effort: 'low' } })))['cache_read_input_tokens']).toBe(40);
    expect((await send(tail({ output_config: { effort: 'high' } })))['cache_read_input_tokens']).toBe(20);
    // Shown while it is the last turn (40 tokens); once a user turn follows it is not rendered.
    const cleared = { ...turn({ clear_at: 'next_user_message' }) };
    expect((await send([user, cleared]))['input_tokens']).toBe(20);
    const later = await send([
      user,
      cleared,
      { role: 'assistant', content: 'ok' },
      { role: 'user', content: words(5, 'n') },
    ]);
    expect(later['cache_read_input_tokens']! + later['input_tokens']! + later['cache_creation_input_tokens']!).toBe(
      20 + 1 + 5,
    );
  });
});
