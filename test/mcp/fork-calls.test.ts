import { describe, expect, it } from 'vitest';
import { ForkCallRegistry, type CapturedForkCall } from '../../src/proxy/fork-calls.ts';

/*
 * Which blocks of a model's answer are calls of the fork tool: Claude Code's direct
 * `mcp__<server>__fork`, and Qwen Code's `tool_call {name, arguments}` bridge to its deferred
 * MCP tools, whose arguments are what its MCP call carries (and no tool_use id).
 */
const directives = ['read notes.txt and report (1/2)', 'read notes.txt and report (2/2)'];

function offered(registry: ForkCallRegistry, seq: number, call: CapturedForkCall['call']): CapturedForkCall {
  const captured: CapturedForkCall = {
    seq,
    body: Buffer.from('{}'),
    headers: {},
    turn: { id: `msg_${seq}`, content: [], stopReason: 'tool_use' },
    call,
    session: undefined,
  };
  registry.offer(captured);
  return captured;
}

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

  it('gives a call without a tool_use id to the oldest call with equal arguments, once', async () => {
    const calls = new ForkCallRegistry();
    const signal = new AbortController().signal;
    const input = { directives, maxUsd: 1 };
    const first = offered(calls, 1, { id: 'toolu_a', name: 'mcp__forkcache__fork', input });
    const other = offered(calls, 2, { id: 'toolu_b', name: 'mcp__forkcache__fork', input: { directives: ['x'] } });
    const second = offered(calls, 3, { id: 'toolu_c', name: 'mcp__forkcache__fork', input });
    // key order as an MCP client may send it back
    const reordered = { maxUsd: 1, directives: [...directives] };
    expect(await calls.claim(reordered, undefined, signal)).toBe(first);
    expect(await calls.claim(reordered, undefined, signal)).toBe(second);
    expect(calls.pending).toBe(1);
    expect(await calls.claim({ directives: ['x'] }, undefined, signal)).toBe(other);
  });
});
