import { describe, expect, it } from 'vitest';
import { ForkCallRegistry, type CapturedForkCall } from '../../../src/integrations/proxy/fork-calls.ts';

/*
 * Which blocks of a model's answer are calls of the fork tool: Claude Code's direct
 * `mcp__<server>__fork`, and Qwen Code's `tool_call {name, arguments}` bridge to its deferred
 * MCP tools, whose arguments are what its MCP call carries (and no tool_use id).
 */
const directives = ['read notes.txt and report (1/2)', 'read notes.txt and report (2/2)'];

function captured(seq: number, call: CapturedForkCall['call'], caller = 'session-a'): CapturedForkCall {
  return {
    seq,
    body: Buffer.from('{}'),
    headers: {},
    turn: { id: `msg_${seq}`, content: [], stopReason: 'tool_use' },
    call,
    session: undefined,
    caller,
  };
}

function offered(
  registry: ForkCallRegistry,
  seq: number,
  call: CapturedForkCall['call'],
  caller = 'session-a',
): CapturedForkCall {
  const made = captured(seq, call, caller);
  registry.offer(made);
  return made;
}

const codeOf = (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => 'claimed',
    (err: { code?: string }) => err.code,
  );

describe('the fork calls the proxy captures', () => {
  const registry = new ForkCallRegistry();

  it("recognises Claude Code's direct call of mcp__<server>__fork", () => {
    const block = { type: 'tool_use', id: 'toolu_1', name: 'mcp__forkcache__fork', input: { directives } };
    expect(registry.callOf(block)).toEqual({ id: 'toolu_1', name: 'mcp__forkcache__fork', input: { directives } });
  });

  it("recognises Qwen Code's tool_call naming the fork tool, with its arguments as the input", () => {
    const block = {
      type: 'tool_use',
      id: 'toolu_2',
      name: 'tool_call',
      input: { name: 'mcp__forkcache__fork', arguments: { directives, maxUsd: 2 } },
    };
    expect(registry.callOf(block)).toEqual({
      id: 'toolu_2',
      name: 'mcp__forkcache__fork',
      input: { directives, maxUsd: 2 },
    });
  });

  it('leaves every other call alone', () => {
    const calls = [
      { type: 'tool_use', id: 'a', name: 'tool_call', input: { name: 'edit', arguments: { file_path: '/x' } } },
      { type: 'tool_use', id: 'b', name: 'tool_call', input: { name: 'mcp__forkcache__fork_status', arguments: {} } },
      // arguments that are not an object: Qwen Code would refuse the call itself
      { type: 'tool_use', id: 'c', name: 'tool_call', input: { name: 'mcp__forkcache__fork', arguments: '[]' } },
      { type: 'tool_use', id: 'd', name: 'tool_call', input: { name: 'mcp__forkcache__fork', arguments: [] } },
      { type: 'tool_use', id: 'e', name: 'tool_search', input: { query: 'select:mcp__forkcache__fork' } },
      { type: 'text', text: 'tool_call mcp__forkcache__fork' },
      { type: 'tool_use', id: 'f', name: 'fork', input: { directives } },
    ];
    expect(calls.map((b) => registry.callOf(b))).toEqual(calls.map(() => undefined));
  });

  it('reads a request that declares the tool, or names it in a text block (an escaped quote after it)', () => {
    const declared = JSON.stringify({ tools: [{ name: 'mcp__forkcache__fork' }] });
    const named = JSON.stringify({ messages: [{ role: 'user', content: '- "mcp__forkcache__fork": "Fork this"' }] });
    expect(named).toContain('__fork\\"');
    expect(registry.mayDeclare(Buffer.from(declared))).toBe(true);
    expect(registry.mayDeclare(Buffer.from(named))).toBe(true);
    expect(registry.mayDeclare(Buffer.from(JSON.stringify({ messages: [{ content: 'fork it' }] })))).toBe(false);
  });

  it("gives a call without a tool_use id to its caller's newest call with equal arguments, once", async () => {
    const calls = new ForkCallRegistry();
    const signal = new AbortController().signal;
    const input = { directives, maxUsd: 1 };
    const first = offered(calls, 1, { id: 'toolu_a', name: 'mcp__forkcache__fork', input });
    const other = offered(calls, 2, { id: 'toolu_b', name: 'mcp__forkcache__fork', input: { directives: ['x'] } });
    const second = offered(calls, 3, { id: 'toolu_c', name: 'mcp__forkcache__fork', input });
    // key order as an MCP client may send it back
    const reordered = { maxUsd: 1, directives: [...directives] };
    expect(await calls.claim(reordered, undefined, signal)).toBe(second);
    expect(await calls.claim(reordered, undefined, signal)).toBe(first);
    expect(calls.pending).toBe(1);
    expect(await calls.claim({ directives: ['x'] }, undefined, signal)).toBe(other);
  });
});

/*
 * The attacker's side: two sessions through one proxy make fork calls with the same arguments.
 * Before the binding, a call whose id was not seen yet was claimed by its arguments, oldest
 * first: session B's children forked session A's conversation and carried A's key.
 */
describe('a fork call is bound to the session that made it', () => {
  const input = { directives };
  const call = (id: string) => ({ id, name: 'mcp__forkcache__fork', input });

  it('waits for the id the client names, never taking another session’s call with equal arguments', async () => {
    const calls = new ForkCallRegistry();
    const a = offered(calls, 1, call('toolu_a'), 'session-a');
    const claimed = calls.claim(input, 'toolu_b', new AbortController().signal);
    let settled = false;
    void claimed.then(() => (settled = true));
    await Promise.resolve();
    expect(settled).toBe(false);
    const b = offered(calls, 2, call('toolu_b'), 'session-b');
    expect(await claimed).toBe(b);
    expect(await calls.claim(input, 'toolu_a', new AbortController().signal)).toBe(a);
  });

  it('refuses an id it never sees once the wait ends, with a clear error, and leaves the other call', async () => {
    const calls = new ForkCallRegistry();
    offered(calls, 1, call('toolu_a'), 'session-a');
    const wait = new AbortController();
    const claimed = calls.claim(input, 'toolu_gone', wait.signal);
    wait.abort();
    await expect(claimed).rejects.toMatchObject({ code: 'MCP_CALL_UNSEEN', message: /toolu_gone/ });
    expect(calls.pending).toBe(1);
  });

  it('refuses a call without an id when two sessions made calls with its arguments', async () => {
    const calls = new ForkCallRegistry();
    offered(calls, 1, call('toolu_a'), 'session-a');
    offered(calls, 2, call('toolu_b'), 'session-b');
    const claimed = calls.claim(input, undefined, new AbortController().signal);
    await expect(claimed).rejects.toMatchObject({ code: 'MCP_CALL_AMBIGUOUS', message: /2 sessions/ });
    // nothing was taken: each session can still claim its own by id
    expect(calls.pending).toBe(2);
  });

  it('a stale, never-run call of an earlier session does not win the claim', async () => {
    const calls = new ForkCallRegistry();
    offered(calls, 1, call('toolu_stale'), 'earlier-session');
    const now = offered(calls, 2, call('toolu_now'), 'this-session');
    // by id: this session's own call
    expect(await calls.claim(input, 'toolu_now', new AbortController().signal)).toBe(now);
    // without an id, beside this session's next call with equal arguments: refused, never the stale one
    offered(calls, 3, call('toolu_again'), 'this-session');
    expect(await codeOf(calls.claim(input, undefined, new AbortController().signal))).toBe('MCP_CALL_AMBIGUOUS');
  });

  it('without an id, waits for the answers still being read when it arrived, and ignores later ones', async () => {
    const calls = new ForkCallRegistry();
    const mine = calls.watch();
    const claimed = calls.claim(input, undefined, new AbortController().signal);
    // an exchange that begins after the call arrived cannot be the one the client answered
    const later = calls.watch();
    later.offer(captured(3, call('toolu_later'), 'session-b'));
    later.settle();
    const own = captured(2, call('toolu_mine'), 'session-a');
    mine.offer(own);
    mine.settle();
    expect(await claimed).toBe(own);
  });

  it('without an id, an answer still being read when the wait ends refuses the call rather than guess', async () => {
    const calls = new ForkCallRegistry();
    offered(calls, 1, call('toolu_a'), 'session-a');
    calls.watch(); // another session's answer, still streaming
    const wait = new AbortController();
    const claimed = calls.claim(input, undefined, wait.signal);
    wait.abort();
    await expect(claimed).rejects.toMatchObject({ code: 'MCP_CALL_UNSEEN', message: /cannot be told yet/ });
    expect(calls.pending).toBe(1);
  });

  it('without an id and no such call seen, refuses at once once nothing is being read', async () => {
    const calls = new ForkCallRegistry();
    const reading = calls.watch();
    const claimed = calls.claim(input, undefined, new AbortController().signal);
    reading.settle();
    await expect(claimed).rejects.toMatchObject({ code: 'MCP_CALL_UNSEEN' });
  });
});
