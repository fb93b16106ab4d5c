import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { chatClient, chatEmulator, openAiError } from './helpers.ts';

/*
 * `--api openai`: `tool_calls[].function.arguments` is a JSON string the emulator parses into
 * the Messages-shaped view. 20,000 levels deep it overflowed the stack further on: a 500, which
 * the SDK retried. The Messages path answers deep nesting with a 400 naming the field; so does
 * this one now.
 */

const deep = (n: number) => `{"a":${'['.repeat(n)}${']'.repeat(n)}}`;
const messages = (args: string): OpenAI.ChatCompletionMessageParam[] => [
  { role: 'user', content: 'call it' },
  {
    role: 'assistant',
    content: null,
    tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: args } }],
  },
  { role: 'tool', tool_call_id: 'c1', content: 'done' },
];

describe('deep JSON in tool call arguments (Chat Completions)', () => {
  it('20,000 levels → 400 naming messages[1].tool_calls[0].function.arguments; the SDK does not retry it', async () => {
    const emu = await chatEmulator('openai');
    const api = chatClient(emu, 'openai', { maxRetries: 3 });
    const err = await openAiError(api.chat.completions.create({ model: 'gpt-5', messages: messages(deep(20_000)) }));
    expect(err.status).toBe(400);
    expect(err.message).toMatch(
      /messages\[1\]\.tool_calls\[0\]\.function\.arguments: a\[0\]\[0\].*: nested deeper than 256 levels/,
    );
    expect((err.error as { param?: string }).param).toBe('messages[1].tool_calls[0].function.arguments');
    expect(emu.stats().requests.total).toBe(1); // a 400 is final: no retries
  });

  it('ordinary arguments, and arguments that are not JSON, are still served', async () => {
    const emu = await chatEmulator('openai');
    const api = chatClient(emu);
    for (const args of [deep(20), '{"path":"a.txt"}', 'not json at all']) {
      const done = await api.chat.completions.create({ model: 'gpt-5', messages: messages(args) });
      expect(done.choices[0]!.finish_reason).toBe('stop');
    }
  });
});
