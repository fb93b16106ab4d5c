import { describe, expect, it } from 'vitest';
import { FORK_PLACEHOLDER_RESULT } from '../../../src/core/wire/fork-text.ts';
import { captureSnapshot } from '../../../src/core/fork/snapshot.ts';
import { childRequestBody, childRequestObject } from '../../../src/core/prefix/body.ts';
import { freeze } from '../../../src/core/prefix/freeze.ts';
import { decode, fixture } from '../../helpers.ts';

type Req = Record<string, any>;
const snapshot = (mutate?: (r: Req) => void) => {
  const request = fixture<Req>('parent-request.json');
  mutate?.(request);
  return captureSnapshot(request);
};
const PER = { max_tokens: 1024, stream: true };

describe('freeze', () => {
  it('renders the head as canonical JSON: fixed top-level order, no whitespace, parent bytes kept', () => {
    const prefix = freeze(snapshot());
    const head = decode(prefix.head);
    const request = fixture<Req>('parent-request.json');
    const expectedStart = `{"model":"claude-opus-5-5","system":${JSON.stringify(request['system'])},"tools":${JSON.stringify(request['tools'])},"tool_choice":{"type":"auto"},"metadata":{"user_id":"u-123"},"messages":[`;
    expect(head.startsWith(expectedStart)).toBe(true);
    expect(head).not.toMatch(/\n(?!")|": /); // no formatting whitespace (newlines inside strings are escaped)
    // ends right after the last shared block: the last placeholder, carrying the boundary marker
    expect(
      head.endsWith(
        `{"type":"tool_result","tool_use_id":"toolu_03","content":"${FORK_PLACEHOLDER_RESULT}","cache_control":{"type":"ephemeral"}}`,
      ),
    ).toBe(true);
    expect(prefix.headEnd).toBe('content-open');
  });

  it('freezes the same snapshot to the same bytes and hash, and a changed one to different ones', () => {
    const a = freeze(snapshot());
    const b = freeze(snapshot());
    expect(decode(b.head)).toBe(decode(a.head));
    expect(b.sha256).toBe(a.sha256);
    expect(b.id).toBe(a.sha256.slice(0, 16));
    const flipped = freeze(
      snapshot(
        (r) =>
          (r['tools'][0] = {
            description: r['tools'][0].description,
            name: 'read_file',
            input_schema: r['tools'][0].input_schema,
          }),
      ),
    );
    expect(flipped.sha256).not.toBe(a.sha256);
    expect(freeze(snapshot(), { layout: 'qwen' }).sha256).toBe(a.sha256); // same shared part in this case
    expect(freeze(snapshot(), { ttl: '1h' }).sha256).not.toBe(a.sha256);
  });

  it('places at most two markers: the parent system marker and one on the last shared block', () => {
    const prefix = freeze(snapshot());
    // the parent's marker inside its history (messages[2].content[0]) is dropped
    expect(prefix.shared.markers).toEqual(['system[1]', 'messages[4].content[1]']);
    expect(prefix.shared.boundaryPath).toBe('messages[4].content[1]');
    expect(decode(prefix.head).match(/cache_control/g)).toHaveLength(2);
  });

  it('keeps only the last of several system/tools markers', () => {
    const prefix = freeze(snapshot((r) => (r['tools'][2].cache_control = { type: 'ephemeral' })));
    expect(prefix.shared.markers).toEqual(['system[1]', 'messages[4].content[1]']);
    const toolsOnly = freeze(
      snapshot((r) => {
        r['tools'][2].cache_control = { type: 'ephemeral' };
        delete r['system'][1].cache_control;
      }),
    );
    expect(toolsOnly.shared.markers).toEqual(['tools[2]', 'messages[4].content[1]']);
  });

  it('keeps 1h markers before 5m ones', () => {
    const oneHour = freeze(snapshot(), { ttl: '1h' });
    const text = decode(oneHour.head);
    expect(text.match(/"cache_control":\{"type":"ephemeral","ttl":"1h"\}/g)).toHaveLength(2);
    const body = JSON.parse(decode(childRequestBody(oneHour, oneHour.child('x'), PER)));
    const last = body.messages.at(-1).content.at(-1);
    expect(last.cache_control).toEqual({ type: 'ephemeral' }); // the child's moving marker, 5m, after the 1h ones
  });

  it('moves the boundary marker off blocks that cannot carry one (thinking)', () => {
    const s = snapshot((r) => {
      r['messages'] = [
        { role: 'user', content: 'hi' },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'a' },
            { type: 'thinking', thinking: 'hmm', signature: 'sig' },
          ],
        },
      ];
    });
    const prefix = freeze(s);
    expect(prefix.shared.boundaryPath).toBe('messages[1].content[0]');
    expect(decode(prefix.head).endsWith('{"type":"thinking","thinking":"hmm","signature":"sig"}')).toBe(true);
  });

  it('with no history, marks the last system block and leaves the messages array open', () => {
    const prefix = freeze(snapshot((r) => (r['messages'] = [])));
    expect(prefix.headEnd).toBe('messages-open');
    expect(decode(prefix.head).endsWith('"messages":[')).toBe(true);
    expect(prefix.shared.markers).toEqual(['system[1]']);
    const stringSystem = freeze(
      snapshot((r) => {
        r['messages'] = [];
        r['system'] = 'plain system';
      }),
    );
    expect(stringSystem.shared.markers).toEqual(['system[0]']);
    expect(decode(stringSystem.head)).toContain(
      '"system":[{"type":"text","text":"plain system","cache_control":{"type":"ephemeral"}}]',
    );
  });

  it('keeps a string system prompt a string when the marker goes elsewhere', () => {
    const prefix = freeze(snapshot((r) => (r['system'] = 'plain system')));
    expect(decode(prefix.head)).toContain('"system":"plain system"');
  });

  it('rejects a bad ttl', () => {
    expect(() => freeze(snapshot(), { ttl: '2h' as '1h' })).toThrow(/ttl: expected "5m" or "1h", got "2h"/);
  });
});

describe('childRequestBody', () => {
  it('is head + suffix: valid JSON equal to the request built as an object', () => {
    for (const layout of ['claude', 'qwen'] as const) {
      const prefix = freeze(snapshot(), { layout });
      const child = prefix.child('rename parseThing to parseItem in src/a.ts');
      const body = childRequestBody(prefix, child, PER);
      expect(Buffer.from(body.subarray(0, prefix.byteLength)).equals(Buffer.from(prefix.head))).toBe(true);
      expect(JSON.parse(decode(body))).toEqual(childRequestObject(prefix.shared, child, PER));
    }
  });

  it('puts one moving marker on the child last block and strips any other', () => {
    const prefix = freeze(snapshot());
    const child = prefix.child('x');
    const turn = {
      tailBlocks: [{ ...child.tailBlocks[0]!, cache_control: { type: 'ephemeral' as const } }],
      messages: [
        {
          role: 'assistant' as const,
          content: [{ type: 'tool_use' as const, id: 't9', name: 'read_file', input: { path: 'a' } }],
        },
        { role: 'user' as const, content: [{ type: 'tool_result' as const, tool_use_id: 't9', content: 'text' }] },
      ],
    };
    const body = JSON.parse(decode(childRequestBody(prefix, turn, PER)));
    const text = JSON.stringify(body);
    expect(text.match(/cache_control/g)).toHaveLength(3);
    expect(body.messages.at(-1).content[0].cache_control).toEqual({ type: 'ephemeral' });
    expect(turn.messages[1]!.content[0]).not.toHaveProperty('cache_control'); // input untouched
    const none = JSON.stringify(JSON.parse(decode(childRequestBody(prefix, turn, PER, { marker: false }))));
    expect(none.match(/cache_control/g)).toHaveLength(2);
  });

  it('refuses per-request fields that belong to the head, and a bad max_tokens', () => {
    const prefix = freeze(snapshot());
    expect(() => childRequestBody(prefix, prefix.child('x'), { max_tokens: 10, model: 'other' })).toThrow(
      /perRequest\.model/,
    );
    expect(() => childRequestBody(prefix, prefix.child('x'), { max_tokens: -1 })).toThrow(/perRequest\.max_tokens/);
  });

  it('works when nothing of the history is shared', () => {
    const prefix = freeze(snapshot((r) => (r['messages'] = [])));
    const child = prefix.child('x');
    const parsed = JSON.parse(decode(childRequestBody(prefix, child, PER)));
    expect(parsed).toEqual(childRequestObject(prefix.shared, child, PER));
    expect(parsed.messages).toHaveLength(1);
  });
});

describe('marker strategies (for comparisons)', () => {
  it('last-only keeps the head free of markers; none also drops the child marker', () => {
    const lastOnly = freeze(snapshot(), { markers: 'last-only' });
    expect(lastOnly.shared.markers).toEqual([]);
    expect(decode(lastOnly.head)).not.toContain('cache_control');
    expect(lastOnly.childMarker).toBe('5m');
    const body = decode(childRequestBody(lastOnly, lastOnly.child('x'), PER, { marker: lastOnly.childMarker }));
    expect(body.match(/cache_control/g)).toHaveLength(1);
    const none = freeze(snapshot(), { markers: 'none' });
    expect(none.childMarker).toBe(false);
    expect(decode(childRequestBody(none, none.child('x'), PER, { marker: none.childMarker }))).not.toContain(
      'cache_control',
    );
    expect(() => freeze(snapshot(), { markers: 'some' as 'none' })).toThrow(
      /markers: expected one of boundary, last-only, none/,
    );
  });
});
