import { describe, expect, it } from 'vitest';
import { ForkcacheError } from '../../../src/core/util/errors.ts';
import { messagesRequestFromChat } from '../../../src/core/fork/chat-request.ts';
import { captureSnapshot } from '../../../src/core/fork/snapshot.ts';

const tools = [
  {
    type: 'function',
    function: { name: 'lookup', description: 'Look up', parameters: { type: 'object', properties: {} }, strict: true },
  },
];

describe('messagesRequestFromChat', () => {
  it('turns an app’s Chat request and the calling message into a snapshot’s Messages shape', () => {
    const request = messagesRequestFromChat(
      {
        model: 'gpt-4.1',
        max_tokens: 100,
        messages: [
          { role: 'system', content: 'sys' },
          { role: 'user', content: 'hi' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'c1', type: 'function', function: { name: 'lookup', arguments: '{"a":1}' } }],
          },
          { role: 'tool', tool_call_id: 'c1', content: 'found' },
          { role: 'user', content: [{ type: 'text', text: 'next' }] },
        ],
        tools,
        tool_choice: 'required',
        temperature: 0.2,
      },
      {
        content: 'Forking.',
        tool_calls: [{ id: 'c2', function: { name: 'fork', arguments: '{"directives":["x"]}' } }],
      },
    );
    expect(request).toEqual({
      model: 'gpt-4.1',
      system: 'sys',
      tools: [
        { name: 'lookup', description: 'Look up', input_schema: { type: 'object', properties: {} }, strict: true },
      ],
      tool_choice: { type: 'any' },
      temperature: 0.2,
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'c1', name: 'lookup', input: { a: 1 } }] },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'c1', content: 'found' },
            { type: 'text', text: 'next' },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Forking.' },
            { type: 'tool_use', id: 'c2', name: 'fork', input: { directives: ['x'] } },
          ],
        },
      ],
    });
    expect(captureSnapshot(request).messages).toHaveLength(4);
  });

  it.each([
    [{ messages: [{ role: 'developer', content: 'sys' }] }, 'messages[0]', /systemMessageMode: 'system'/],
    [
      {
        messages: [
          { role: 'user', content: 'a' },
          { role: 'system', content: 'b' },
        ],
      },
      'messages[1]',
      /after the first/,
    ],
    [
      {
        messages: [
          { role: 'user', content: 'a' },
          { role: 'user', content: 'b' },
        ],
      },
      'messages[1]',
      /two user messages/,
    ],
    [{ messages: [{ role: 'user', content: [{ type: 'input_audio' }] }] }, 'messages[0].content[0]', /input_audio/],
    [{ messages: [], tools: [{ type: 'custom', custom: {} }] }, 'tools[0]', /function tools/],
  ])('refuses what has no Messages form, naming the field (%#)', (chat, path, message) => {
    let error: unknown;
    try {
      messagesRequestFromChat({ model: 'm', ...chat });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ForkcacheError);
    expect((error as ForkcacheError).code).toBe('SNAPSHOT_INVALID');
    expect((error as ForkcacheError).message).toMatch(message);
    expect((error as ForkcacheError).data).toMatchObject({ path });
  });
});
