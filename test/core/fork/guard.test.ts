import { describe, expect, it } from 'vitest';
import { FORK_QUERY_SOURCE } from '../../../src/core/wire/fork-text.ts';
import { wrapDirective } from '../../../src/core/fork/directive.ts';
import { assertMaySpawn, decideSpawn, isForkChild } from '../../../src/core/fork/guard.ts';

const childMessages = [{ role: 'user' as const, content: [{ type: 'text' as const, text: wrapDirective('do x') }] }];

describe('recursion guard', () => {
  it('fast path: the query source carried with the task', () => {
    expect(isForkChild({ querySource: FORK_QUERY_SOURCE, messages: [] })).toBe(true);
    expect(isForkChild({ querySource: 'repl_main_thread', messages: [] })).toBe(false);
  });

  it('fallback: the boilerplate tag in the child own messages, even when the flag was lost', () => {
    expect(isForkChild({ messages: childMessages })).toBe(true);
    // a compacted history that kept the directive as a plain string
    expect(isForkChild({ messages: [{ role: 'user', content: wrapDirective('y') }] })).toBe(true);
  });

  it('does not mistake a tool result that shows the tag for a fork', () => {
    const messages = [
      { role: 'user' as const, content: 'read constants.ts' },
      {
        role: 'assistant' as const,
        content: [{ type: 'tool_use' as const, id: 't1', name: 'read_file', input: { path: 'c.ts' } }],
      },
      {
        role: 'user' as const,
        content: [{ type: 'tool_result' as const, tool_use_id: 't1', content: "const TAG = '<fork-boilerplate>'" }],
      },
    ];
    expect(isForkChild({ messages })).toBe(false);
  });

  it('refuses a spawn from a fork child with a message telling it to do the work', () => {
    expect(() => assertMaySpawn({ messages: childMessages })).toThrow(
      expect.objectContaining({ code: 'FORK_RECURSION', message: expect.stringMatching(/do this work directly/) }),
    );
    expect(() => assertMaySpawn({ messages: [] })).not.toThrow();
  });
});

describe('decideSpawn', () => {
  it('forks without an agent type; an explicit type or coordinator mode runs a fresh agent', () => {
    expect(decideSpawn({})).toEqual({ kind: 'fork' });
    expect(decideSpawn({ subagentType: 'reviewer' })).toEqual({
      kind: 'fresh',
      agentType: 'reviewer',
      reason: 'explicit-agent-type',
    });
    expect(decideSpawn({ coordinatorMode: true })).toEqual({
      kind: 'fresh',
      agentType: 'general-purpose',
      reason: 'coordinator-mode',
    });
  });
});
