import { describe, expect, it } from 'vitest';
import { captureSnapshot, fallbackSnapshot, snapshotOrFallback } from '../../../src/core/fork/snapshot.ts';
import { fixture } from '../../helpers.ts';

type Req = Record<string, any>;

function expectInvalid(request: unknown, pattern: RegExp): void {
  try {
    captureSnapshot(request);
  } catch (err) {
    expect((err as { code: string }).code).toBe('SNAPSHOT_INVALID');
    expect((err as Error).message).toMatch(pattern);
    return;
  }
  throw new Error('expected captureSnapshot to throw');
}

describe('captureSnapshot', () => {
  it('keeps system, tools, settings and messages by value and drops per-request fields', () => {
    const request = fixture<Req>('parent-request.json');
    const snap = captureSnapshot(request);
    expect(Object.keys(snap)).toEqual([
      'model',
      'system',
      'tools',
      'tool_choice',
      'metadata',
      'messages',
      'version',
      'source',
    ]);
    expect(snap.system).toEqual(request['system']);
    expect(snap.tools!.map((t) => (t as { name: string }).name)).toEqual(['read_file', 'grep', 'agent']);
    expect(snap.source).toBe('parent');
    expect(snap).not.toHaveProperty('max_tokens');
    expect(snap).not.toHaveProperty('stream');
  });

  it('is a deep, frozen clone: later changes to the parent request do not leak in', () => {
    const request = fixture<Req>('parent-request.json');
    const snap = captureSnapshot(request);
    request['system'][0].text = 'CHANGED';
    request['messages'][0].content = 'CHANGED';
    expect((snap.system as unknown as { text: string }[])[0]!.text).not.toBe('CHANGED');
    expect(snap.messages[0]!.content).toBe('Rename parseThing to parseItem across src/.');
    expect(Object.isFrozen(snap.messages[3])).toBe(true);
    expect(() => {
      (snap.tools as any)[0].name = 'x';
    }).toThrow(TypeError);
  });

  it('preserves the parent key order of nested objects (their bytes are the cache key)', () => {
    const request = fixture<Req>('parent-request.json');
    request['tools'][0] = {
      input_schema: request['tools'][0].input_schema,
      name: 'read_file',
      description: 'Read a file.',
    };
    const snap = captureSnapshot(request);
    expect(Object.keys(snap.tools![0]!)).toEqual(['input_schema', 'name', 'description']);
  });

  it('changes version when system or tools change, not when messages do', () => {
    const base = captureSnapshot(fixture('parent-request.json')).version;
    const moreHistory = fixture<Req>('parent-request.json');
    moreHistory['messages'][0].content = 'Something else';
    expect(captureSnapshot(moreHistory).version).toBe(base);
    const otherSystem = fixture<Req>('parent-request.json');
    otherSystem['system'][0].text += ' ';
    expect(captureSnapshot(otherSystem).version).not.toBe(base);
    const reordered = fixture<Req>('parent-request.json');
    reordered['tools'].reverse();
    expect(captureSnapshot(reordered).version).not.toBe(base);
  });

  it('names the path of a malformed block', () => {
    const request = fixture<Req>('parent-request.json');
    delete request['messages'][2].content[0].tool_use_id;
    expectInvalid(request, /messages\[2\]\.content\[0\]\.tool_use_id/);
    expectInvalid({ ...fixture<Req>('parent-request.json'), model: '' }, /^snapshot: model:/);
    expectInvalid({ model: 'm', messages: [{ role: 'robot', content: 'x' }] }, /messages\[0\]\.role/);
  });

  it('refuses a dangling tool_use in the middle and an orphan tool_result', () => {
    const dangling = fixture<Req>('parent-request.json');
    dangling['messages'][2].content = [{ type: 'text', text: 'no result' }];
    expectInvalid(dangling, /messages\[1\]\.content\[1\]: tool_use "toolu_01" has no tool_result in messages\[2\]/);
    const orphan = fixture<Req>('parent-request.json');
    orphan['messages'][2].content.push({ type: 'tool_result', tool_use_id: 'toolu_99', content: 'x' });
    expectInvalid(orphan, /messages\[2\]\.content\[1\]\.tool_use_id: no tool_use "toolu_99" in messages\[1\]/);
  });

  it('allows the spawn calls to dangle at the end (the fork builder answers them)', () => {
    expect(captureSnapshot(fixture('parent-request.json')).messages).toHaveLength(4);
  });

  it('starts with the user; consecutive messages of one role are one turn, as the API combines them', () => {
    expectInvalid(
      { model: 'm', messages: [{ role: 'assistant', content: 'hi' }] },
      /messages\[0\]\.role: the first message must have role "user"/,
    );
    // two user records in a row (a Claude Code session), then two assistant ones: accepted, as sent
    const accepted = captureSnapshot({
      model: 'm',
      messages: [
        { role: 'user', content: 'a' },
        { role: 'user', content: [{ type: 'text', text: 'b' }] },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'Read', input: {} }] },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't2', name: 'Read', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'x' }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't2', content: 'y' }] },
      ],
    });
    expect(accepted.messages.map((m) => m.role)).toEqual(['user', 'user', 'assistant', 'assistant', 'user', 'user']);
    // the combined turn is still checked as one: an answer to a call of no turn before it is refused
    expectInvalid(
      {
        model: 'm',
        messages: [
          { role: 'user', content: 'a' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'Read', input: {} }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'x' }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't9', content: 'y' }] },
        ],
      },
      /messages\[3\]\.content\[0\]\.tool_use_id: no tool_use "t9" in messages\[1\]/,
    );
    // and a call answered only two turns later is still dangling
    expectInvalid(
      {
        model: 'm',
        messages: [
          { role: 'user', content: 'a' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'Read', input: {} }] },
          { role: 'user', content: 'no result here' },
          { role: 'assistant', content: 'ok' },
        ],
      },
      /messages\[1\]\.content\[0\]: tool_use "t1" has no tool_result in messages\[2\]/,
    );
  });

  it('refuses more than 4 cache markers, listing them', () => {
    const request = fixture<Req>('parent-request.json');
    for (const tool of request['tools']) tool.cache_control = { type: 'ephemeral' };
    expectInvalid(
      request,
      /a maximum of 4 blocks with cache_control may be provided\. Found 5 \(tools\[0\], tools\[1\], tools\[2\], system\[1\], messages\[2\]\.content\[0\]\)/,
    );
  });

  it('refuses duplicate tool names', () => {
    const request = fixture<Req>('parent-request.json');
    request['tools'][1].name = 'read_file';
    expectInvalid(request, /tools\[1\]\.name: duplicate tool name "read_file" \(also tools\[0\]\)/);
  });
});

describe('system turns (Claude Code 2.1.3xx sends them mid-conversation)', () => {
  const use = { type: 'tool_use', id: 'toolu_1', name: 'Read', input: {} };
  it('are kept in place and take no part in alternation or tool pairing', () => {
    const messages = [
      { role: 'user', content: 'hi' },
      { role: 'system', content: '# Environment' },
      { role: 'assistant', content: [use] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'x' }] },
    ];
    expect(captureSnapshot({ model: 'claude-opus-5-5', messages }).messages).toEqual(messages);
  });

  it('errors still name the real message index', () => {
    const messages = [
      { role: 'user', content: 'hi' },
      { role: 'system', content: 'env' },
      { role: 'assistant', content: [use] },
      { role: 'user', content: 'no result' },
      { role: 'assistant', content: 'ok' },
    ];
    expectInvalid(
      { model: 'claude-opus-5-5', messages },
      /messages\[2\]\.content\[0\]: tool_use "toolu_1" has no tool_result in messages\[3\]/,
    );
  });
});

describe('fallback snapshot', () => {
  it('is used only when there is no parent snapshot, and says so', () => {
    const fallback = {
      model: 'claude-opus-5-5',
      system: 'fallback prompt',
      tools: [{ name: 'read_file', input_schema: { type: 'object' as const } }],
    };
    const snap = snapshotOrFallback(undefined, fallback);
    expect(snap.source).toBe('fallback');
    expect(snap.messages).toEqual([]);
    expect(snap.system).toBe('fallback prompt');
    expect(Object.isFrozen(snap)).toBe(true);
    const parent = captureSnapshot(fixture('parent-request.json'));
    expect(snapshotOrFallback(parent, fallback)).toBe(parent);
    expect(fallbackSnapshot(fallback).version).toBe(snap.version);
  });
});
