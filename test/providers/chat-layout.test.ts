import { describe, expect, it } from 'vitest';
import { QWEN_ACK, QWEN_BEGIN } from '../../src/core/wire/fork-text.ts';
import { captureSnapshot } from '../../src/core/fork/snapshot.ts';
import { freeze } from '../../src/core/prefix/freeze.ts';
import { attachFrozenPrefix } from '../../src/core/prefix/sab.ts';
import { openForkWire } from '../../src/providers/registry.ts';
import type { ProviderId } from '../../src/core/wire/providers.ts';
import { fixture } from '../helpers.ts';

type Json = Record<string, any>;
const API = { baseURL: 'http://127.0.0.1:9/v1', apiKey: 'k', maxRetries: 0, timeoutMs: 1000, headers: {} };

/** The fixture parent: system blocks, tools, and a history that ends with two spawn calls. */
function parent(messages?: unknown[]): ReturnType<typeof captureSnapshot> {
  const request = fixture<Json>('parent-request.json');
  if (messages) request['messages'] = messages;
  return captureSnapshot(request);
}

function childBody(
  provider: ProviderId,
  layout: 'claude' | 'qwen',
  directive: string,
  messages?: unknown[],
): { body: Uint8Array; head: Uint8Array; json: Json } {
  const prefix = freeze(parent(messages), { provider, layout });
  const attached = attachFrozenPrefix(prefix.sab);
  const wire = openForkWire({ ...API, provider }, attached);
  const body = wire.body(prefix.child(directive), { max_tokens: 512, stream: true }, prefix.childMarker);
  return { body, head: prefix.head, json: JSON.parse(new TextDecoder().decode(body)) as Json };
}

const markedParts = (messages: Json[]): string[] =>
  messages.flatMap((m, i) =>
    Array.isArray(m['content'])
      ? (m['content'] as Json[]).flatMap((p, j) => (p['cache_control'] ? [`${i}:${m['role']}:${j}`] : []))
      : [],
  );

describe('a Chat Completions head', () => {
  it('DashScope, qwen layout: the head bytes begin every body; markers where Qwen Code puts them plus the shared boundary; at most 4, none counted on tools', () => {
    const a = childBody('dashscope', 'qwen', 'rename in src/a.ts');
    const b = childBody('dashscope', 'qwen', 'rename in src/b.ts');
    expect(Buffer.from(a.body.subarray(0, a.head.byteLength)).equals(Buffer.from(a.head))).toBe(true);
    expect(Buffer.from(a.head).equals(Buffer.from(b.head))).toBe(true);
    const m = a.json['messages'] as Json[];
    // system (stable), the parent's history, the placeholder results of both calls, then the child
    expect(m.map((x) => x['role'])).toEqual([
      'system',
      'user',
      'assistant',
      'tool',
      'assistant',
      'tool',
      'tool',
      'user',
      'assistant',
      'user',
    ]);
    expect(m[4]!['tool_calls'].map((c: Json) => c['function']['name'])).toEqual(['agent', 'agent']);
    expect(m[8]!['content']).toBe(QWEN_ACK);
    expect(m[9]!['content']).toEqual([{ type: 'text', text: QWEN_BEGIN, cache_control: { type: 'ephemeral' } }]);
    expect(m[7]!['content'][0]['text']).toContain('Directive: rename in src/a.ts');
    // system, the last shared block (the last placeholder), the child's moving marker on `Begin.`
    expect(markedParts(m)).toEqual(['0:system:1', '6:tool:0', '9:user:0']);
    // Qwen Code also marks the last tool (DashScope ignores it)
    expect((a.json['tools'] as Json[]).at(-1)!['cache_control']).toEqual({ type: 'ephemeral' });
    expect((a.json['tools'] as Json[]).slice(0, -1).every((t) => t['cache_control'] === undefined)).toBe(true);
    expect(a.json).toMatchObject({ max_tokens: 512, stream: true, stream_options: { include_usage: true } });
    expect(a.json['prompt_cache_key']).toBeUndefined();
  });

  it('OpenAI, claude layout: no markers anywhere, max_completion_tokens, one prompt_cache_key per fan-out', () => {
    const a = childBody('openai', 'claude', 'rename in src/a.ts');
    const b = childBody('openai', 'claude', 'rename in src/b.ts');
    const text = new TextDecoder().decode(a.body);
    expect(text).not.toContain('cache_control');
    const m = a.json['messages'] as Json[];
    expect(m.map((x) => x['role'])).toEqual([
      'system',
      'user',
      'assistant',
      'tool',
      'assistant',
      'tool',
      'tool',
      'user',
    ]);
    expect(typeof m[0]!['content'] === 'string' || Array.isArray(m[0]!['content'])).toBe(true);
    expect(a.json['max_completion_tokens']).toBe(512);
    expect(a.json['max_tokens']).toBeUndefined();
    expect(a.json['prompt_cache_key']).toMatch(/^forkcache-[0-9a-f]{16}$/);
    expect(a.json['prompt_cache_key']).toBe(b.json['prompt_cache_key']);
    // the fixture's settings the Chat Completions API has no field for are not sent
    expect(a.json['metadata']).toBeUndefined();
  });

  it('the qwen layout keeps its three history cases on the Chat wire', () => {
    const modelEnd = [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: [{ type: 'text', text: 'hello' }] },
    ];
    const plain = childBody('dashscope', 'qwen', 'do x', modelEnd).json['messages'] as Json[];
    expect(plain.map((x) => x['role'])).toEqual(['system', 'user', 'assistant', 'user']);
    expect(plain.at(-1)!['content'][0]['text']).toContain('Directive: do x');
    // a trailing user message is dropped: the directive replaces it
    const userEnd = [...modelEnd, { role: 'user', content: 'and now?' }];
    const dropped = childBody('dashscope', 'qwen', 'do y', userEnd).json['messages'] as Json[];
    expect(dropped.map((x) => x['role'])).toEqual(['system', 'user', 'assistant', 'user']);
    expect(JSON.stringify(dropped)).not.toContain('and now?');
    // ends with calls: covered above (placeholders, directive, acknowledgement, `Begin.`)
  });

  it('the Anthropic head is what it always was (the default provider)', () => {
    const snapshot = parent();
    expect(
      Buffer.from(freeze(snapshot, { provider: 'anthropic' }).head).equals(Buffer.from(freeze(snapshot).head)),
    ).toBe(true);
    expect(freeze(snapshot).provider).toBe('anthropic');
  });
});
