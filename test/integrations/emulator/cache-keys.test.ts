import { describe, expect, it } from 'vitest';
import type { MessagesRequest } from '../../../src/integrations/emulator/types.ts';
import { render, request, text } from './cache-fixtures.ts';

const tool = {
  name: 'read_file',
  description: 'Read a file',
  input_schema: { type: 'object', properties: { path: { type: 'string' } } },
};

function base(extra: Partial<MessagesRequest> = {}): MessagesRequest {
  return request({
    tools: [tool],
    system: [text(12, 'sys')],
    messages: [
      { role: 'user', content: [text(5, 'u')] },
      { role: 'assistant', content: [text(5, 'a')] },
      { role: 'user', content: [text(5, 'v')] },
    ],
    ...extra,
  });
}

const hashes = (req: MessagesRequest, model?: string) => render(req, model).positions.map((p) => p.hash);

describe('cache keys: prefix layout', () => {
  it('orders positions tools → system → messages, with cumulative token counts', () => {
    const prefix = render(base());
    expect(prefix.positions.map((p) => p.segment)).toEqual(['tools', 'system', 'messages', 'messages', 'messages']);
    expect(prefix.positions.map((p) => [p.message, p.block])).toEqual([
      [-1, 0],
      [-1, 0],
      [0, 0],
      [1, 0],
      [2, 0],
    ]);
    const tokens = prefix.positions.map((p) => p.tokens);
    expect(tokens.slice(1)).toEqual([12, 5, 5, 5]);
    expect(prefix.positions.map((p) => p.cumTokens)).toEqual(
      tokens.map((_, i) => tokens.slice(0, i + 1).reduce((a, b) => a + b, 0)),
    );
    expect(prefix.totalTokens).toBe(prefix.positions.at(-1)!.cumTokens);
  });

  it('hashes blocks without their cache_control: moving markers changes no key', () => {
    const marked = base();
    (marked.system as { cache_control?: unknown }[])[0]!.cache_control = { type: 'ephemeral', ttl: '1h' };
    (marked.messages[2]!.content as { cache_control?: unknown }[])[0]!.cache_control = { type: 'ephemeral' };
    expect(hashes(marked)).toEqual(hashes(base()));
  });

  it('one changed byte changes the key of its block and of everything after it', () => {
    const changed = base({ system: [{ type: 'text', text: `${(base().system as { text: string }[])[0]!.text}!` }] });
    const [a, b] = [hashes(base()), hashes(changed)];
    expect(b[0]).toBe(a[0]);
    for (let i = 1; i < a.length; i++) expect(b[i]).not.toBe(a[i]);
  });

  it('keeps the received key order: the same block with keys reordered is a different prefix', () => {
    const reordered = base({
      tools: [{ input_schema: tool.input_schema, name: tool.name, description: tool.description }],
    });
    expect(hashes(reordered)[0]).not.toBe(hashes(base())[0]);
  });

  it('makes the model part of every key', () => {
    const [a, b] = [hashes(base()), hashes(base(), 'claude-opus-4-8')];
    a.forEach((hash, i) => expect(b[i]).not.toBe(hash));
  });

  it.each([
    ['tool_choice', { tool_choice: { type: 'any' as const } }],
    ['thinking', { thinking: { type: 'enabled' as const, budget_tokens: 2048 } }],
    ['effort (output_config)', { output_config: { effort: 'low' } }],
  ])('a %s change invalidates the messages part only', (_name, extra) => {
    const [a, b] = [hashes(base()), hashes(base(extra))];
    expect(b.slice(0, 2)).toEqual(a.slice(0, 2));
    for (let i = 2; i < a.length; i++) expect(b[i]).not.toBe(a[i]);
  });

  it('treats absent tool_choice/thinking like their defaults', () => {
    expect(hashes(base({ tool_choice: { type: 'auto' }, thinking: { type: 'disabled' } }))).toEqual(hashes(base()));
  });

  it('a tools change invalidates everything', () => {
    const more = base({ tools: [tool, { name: 'grep', input_schema: { type: 'object' } }] });
    const [a, b] = [hashes(base()), hashes(more)];
    // The unchanged first tool is still a valid prefix; from the change on, nothing matches.
    expect(b[0]).toBe(a[0]);
    a.slice(1).forEach((hash) => expect(b).not.toContain(hash));
  });

  it('hashes string content like the one text block it renders as', () => {
    const asString = request({ system: 'alpha beta', messages: [{ role: 'user', content: 'gamma delta' }] });
    const asBlocks = request({
      system: [{ type: 'text', text: 'alpha beta' }],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'gamma delta' }] }],
    });
    expect(hashes(asString)).toEqual(hashes(asBlocks));
  });

  it('keeps message boundaries and roles in the key', () => {
    const joined = request({ messages: [{ role: 'user', content: [text(3, 'x'), text(3, 'y')] }] });
    const split = request({
      messages: [
        { role: 'user', content: [text(3, 'x')] },
        { role: 'assistant', content: [text(3, 'y')] },
      ],
    });
    expect(hashes(joined)[0]).toBe(hashes(split)[0]);
    expect(hashes(joined)[1]).not.toBe(hashes(split)[1]);
  });

  it('gives runs of tool_use and of tool_result blocks one lookback unit each', () => {
    const prefix = render(
      request({
        messages: [
          { role: 'user', content: [text(3, 'q')] },
          {
            role: 'assistant',
            content: [text(1, 't'), ...[1, 2, 3].map((i) => ({ type: 'tool_use', id: `t${i}`, name: 'x', input: {} }))],
          },
          {
            role: 'user',
            content: [
              ...[1, 2, 3].map((i) => ({ type: 'tool_result', tool_use_id: `t${i}`, content: 'ok' })),
              text(2, 'z'),
            ],
          },
        ],
      }),
    );
    expect(prefix.positions.map((p) => p.unit)).toEqual([0, 1, 2, 2, 2, 3, 3, 3, 4]);
  });
});
