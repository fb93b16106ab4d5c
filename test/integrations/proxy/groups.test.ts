import { describe, expect, it } from 'vitest';
import { Grouper } from '../../../src/integrations/proxy/report/groups.ts';
import { shapeOf, type RequestShape } from '../../../src/integrations/proxy/diagnosis/shape.ts';
import { FORK_BOILERPLATE_OPEN } from '../../../src/core/wire/fork-text.ts';

// The proxy's tree from the prompts alone: a fork child sent again after a refused attempt (a 529
// under load, a dropped connection) is the same branch of the same fan-out, not a thread of its
// own outside it (seen as "45 of 50 forks in the fan-out" with the real Claude Code under load).

const system = [{ type: 'text', text: 'You are an agent.', cache_control: { type: 'ephemeral' } }];
const user = { role: 'user', content: 'read the notes and fork' };
const called = {
  role: 'assistant',
  content: [{ type: 'tool_use', id: 'toolu_1', name: 'Agent', input: {} }],
};

function shape(messages: unknown[]): RequestShape {
  const body = Buffer.from(JSON.stringify({ model: 'claude-sonnet-4-6', max_tokens: 64, system, messages }));
  const parsed = shapeOf(body);
  if (!parsed) throw new Error('not a Messages request');
  return parsed;
}

const child = (n: number): RequestShape =>
  shape([
    user,
    called,
    {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_1', content: 'forked' },
        { type: 'text', text: `${FORK_BOILERPLATE_OPEN} Directive: part ${n}` },
      ],
    },
  ]);

describe('the proxy grouper', () => {
  it('places a fork child sent again in its fan-out once: every child a member, each member once', () => {
    const grouper = new Grouper();
    const parent = grouper.place(1, shape([user]), undefined, 'session-1');
    expect(parent.kind).toBe('main');
    const placed = [2, 3, 4].map((n) => grouper.place(n, child(n), undefined, 'session-1'));
    const fanout = placed[0]!.fanout;
    expect(fanout).toBeDefined();
    expect(placed.map((p) => p.fanout?.id)).toEqual([fanout!.id, fanout!.id, fanout!.id]);
    // child 3's first attempt was refused: it is sent again, the very same prompt
    const again = grouper.place(5, child(3), undefined, 'session-1');
    expect(again.fanout?.id).toBe(fanout!.id);
    expect(again.thread).toBe(placed[1]!.thread);
    expect(again.kind).toBe('fork');
    expect(fanout!.members).toEqual([2, 3, 4]);
    // a new child after it is still a new member
    expect(grouper.place(6, child(6), undefined, 'session-1').fanout?.id).toBe(fanout!.id);
    expect(fanout!.members).toEqual([2, 3, 4, 6]);
  });

  it("a main thread's turn sent again continues it, and its next turn still follows on", () => {
    const grouper = new Grouper();
    const first = grouper.place(1, shape([user]), undefined, undefined);
    const again = grouper.place(2, shape([user]), undefined, undefined);
    expect(again.thread).toBe(first.thread);
    expect(again.fanout).toBeUndefined();
    const next = grouper.place(
      3,
      shape([user, { role: 'assistant', content: 'done' }, { role: 'user', content: 'and then?' }]),
      undefined,
      undefined,
    );
    expect(next.thread).toBe(first.thread);
    expect(next.fanout).toBeUndefined();
  });
});
