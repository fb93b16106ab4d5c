import type Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { childMessages, planFork, type ForkLayout } from '../../../src/core/fork/layouts.ts';
import { apiError, client, emulator } from './helpers.ts';

/*
 * Model behaviours from the catalogue's constraints: always-adaptive models think (a thinking
 * block with a signature) and refuse enabled/disabled; forced tool_choice and prefill where
 * the API refuses them; thinking blocks bound to the conversation before them.
 */

type Params = Anthropic.MessageCreateParamsNonStreaming;
const OPUS = 'claude-opus-5-5';
const tools: Anthropic.Tool[] = [{ name: 'read_file', input_schema: { type: 'object' } }];

async function status(api: Anthropic, params: Params): Promise<{ status: number; message: string }> {
  const err = await apiError(api.messages.create(params));
  return { status: err.status ?? 0, message: (err.error as { error: { message: string } }).error.message };
}

describe('model rules from the catalogue', () => {
  it('always-adaptive models answer with a signed thinking block and refuse enabled/disabled', async () => {
    const api = client(await emulator());
    const msg = await api.messages.create({
      model: OPUS,
      max_tokens: 200,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(msg.content[0]).toMatchObject({ type: 'thinking', signature: expect.stringMatching(/.{20,}/) });
    const omitted = await api.messages.create({
      model: OPUS,
      max_tokens: 200,
      thinking: { type: 'adaptive', display: 'omitted' },
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(omitted.content[0]).toMatchObject({ type: 'thinking', thinking: '' });
    for (const thinking of [{ type: 'enabled', budget_tokens: 1024 }, { type: 'disabled' }] as const) {
      const got = await status(api, {
        model: OPUS,
        max_tokens: 2048,
        thinking,
        messages: [{ role: 'user', content: 'hi' }],
      });
      expect(got).toMatchObject({
        status: 400,
        message: expect.stringContaining(`"${thinking.type}" is not supported on ${OPUS}`),
      });
    }
    // A model without the constraint keeps thinking off unless asked.
    const plain = await api.messages.create({
      model: 'claude-sonnet-4-6',
      max_tokens: 200,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(plain.content.map((b) => b.type)).toEqual(['text']);
  });

  it('streams the thinking block with its signature', async () => {
    const api = client(await emulator());
    const final = await api.messages
      .stream({ model: OPUS, max_tokens: 200, messages: [{ role: 'user', content: 'hi' }] })
      .finalMessage();
    expect(final.content[0]).toMatchObject({ type: 'thinking', signature: expect.stringMatching(/.{20,}/) });
  });

  it('refuses forced tool_choice on Opus 5.5 and prefill on Haiku 5.5', async () => {
    const api = client(await emulator());
    const forced = await status(api, {
      model: OPUS,
      max_tokens: 100,
      tools,
      tool_choice: { type: 'any' },
      thinking: { type: 'adaptive' },
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(forced.status).toBe(400);
    const prefill = await status(api, {
      model: 'claude-haiku-5-5',
      max_tokens: 100,
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'Sure' },
      ],
    });
    expect(prefill).toMatchObject({ status: 400, message: expect.stringContaining('prefill') });
    const ok = await api.messages.create({
      model: 'claude-sonnet-4-6',
      max_tokens: 100,
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'Sure' },
      ],
    });
    expect(ok.type).toBe('message');
  });

  it('binds a replayed thinking block to the conversation before it, unless drop_block', async () => {
    const api = client(await emulator());
    const first: Anthropic.MessageParam[] = [{ role: 'user', content: 'question one' }];
    const answer = await api.messages.create({ model: OPUS, max_tokens: 200, messages: first });
    const next = (history: Anthropic.MessageParam[]): Anthropic.MessageParam[] => [
      ...history,
      { role: 'assistant', content: answer.content as Anthropic.ContentBlockParam[] },
      { role: 'user', content: 'and then?' },
    ];
    expect((await api.messages.create({ model: OPUS, max_tokens: 200, messages: next(first) })).type).toBe('message');
    const edited = next([{ role: 'user', content: 'question one, edited' }]);
    const refused = await status(api, { model: OPUS, max_tokens: 200, messages: edited });
    expect(refused).toMatchObject({
      status: 400,
      message: expect.stringContaining('The block is bound to a different conversation'),
    });
    const dropped = await api.messages.create({
      model: OPUS,
      max_tokens: 200,
      messages: edited,
      thinking: { type: 'adaptive', block_binding: { prefix_mismatch_behavior: 'drop_block' } },
    } as Params);
    expect(dropped.type).toBe('message');
    // A signature the emulator did not make (the API's own, in an imported transcript) cannot be checked: taken as valid.
    const foreign: Anthropic.MessageParam[] = [...edited];
    foreign[1] = {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'real', signature: 'EqQBCkgIBxABGAIiQL' },
        { type: 'text', text: 'ok' },
      ],
    };
    expect((await api.messages.create({ model: OPUS, max_tokens: 200, messages: foreign })).type).toBe('message');
    // A block whose text was changed fails on every model.
    const tampered = next(first);
    (tampered[1]!.content as Anthropic.ThinkingBlockParam[])[0]!.thinking = 'rewritten';
    expect((await status(api, { model: OPUS, max_tokens: 200, messages: tampered })).message).toContain(
      'Invalid `signature`',
    );
  });

  it.each<ForkLayout>(['claude', 'qwen'])(
    "forkcache's %s fork layout keeps the parent's thinking blocks valid on a binding model",
    async (layout) => {
      const api = client(await emulator());
      const history: Anthropic.MessageParam[] = [{ role: 'user', content: 'rename across src' }];
      const parent = await api.messages.create({ model: OPUS, max_tokens: 200, tools, messages: history });
      // The parent's turn ends with calls (a thinking block, then a tool_use): the case both layouts rewrite.
      const calls: Anthropic.ContentBlockParam[] = [
        ...(parent.content as Anthropic.ContentBlockParam[]),
        { type: 'tool_use', id: 'toolu_1', name: 'read_file', input: { path: 'a' } },
      ];
      const withCalls: Anthropic.MessageParam[] = [...history, { role: 'assistant', content: calls }];
      for (const parentHistory of [
        withCalls,
        [
          ...withCalls,
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'x' }] },
        ] as Anthropic.MessageParam[],
      ]) {
        const plan = planFork(parentHistory, layout);
        const messages = childMessages(
          plan.shared,
          plan.continuation('<fork-boilerplate>rules</fork-boilerplate>\nDirective: read a and report'),
        );
        const child = await api.messages.create({ model: OPUS, max_tokens: 200, tools, messages });
        expect(child.type).toBe('message');
        // And the child's own next turn, replaying its thinking block, is valid too.
        const more = [
          ...messages,
          { role: 'assistant', content: child.content as Anthropic.ContentBlockParam[] },
          { role: 'user', content: 'go on' },
        ] as Anthropic.MessageParam[];
        expect((await api.messages.create({ model: OPUS, max_tokens: 200, tools, messages: more })).type).toBe(
          'message',
        );
      }
    },
  );
});
