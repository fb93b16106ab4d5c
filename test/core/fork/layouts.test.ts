import type Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { FORK_PLACEHOLDER_RESULT, QWEN_ACK, QWEN_BEGIN } from '../../../src/core/wire/fork-text.ts';
import { wrapDirective } from '../../../src/core/fork/directive.ts';
import { checkHistory } from '../../../src/core/fork/history.ts';
import { childMessages, planFork } from '../../../src/core/fork/layouts.ts';
import { fixture } from '../../helpers.ts';

type Message = Anthropic.MessageParam;
const history = (): Message[] => fixture<{ messages: Message[] }>('parent-request.json').messages;
const W = wrapDirective('rename a to b in x.ts');
const W2 = wrapDirective('rename c to d in y.ts');
const full = (layout: 'claude' | 'qwen', h: Message[], w = W): Message[] => {
  const plan = planFork(h, layout);
  return childMessages(plan.shared, plan.continuation(w));
};
const userText = (text: string): Message => ({ role: 'user', content: text });
const modelText = (text: string): Message => ({ role: 'assistant', content: [{ type: 'text', text }] });

describe('claude layout', () => {
  it('clones the spawning assistant message and answers every tool_use with the constant placeholder, then the directive', () => {
    const h = history();
    const plan = planFork(h, 'claude');
    expect(plan.historyCase).toBe('ends-with-calls');
    const msgs = full('claude', h);
    expect(msgs).toHaveLength(5);
    expect(msgs[3]).toEqual(h[3]);
    expect(msgs[4]).toEqual({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_02', content: FORK_PLACEHOLDER_RESULT },
        { type: 'tool_result', tool_use_id: 'toolu_03', content: FORK_PLACEHOLDER_RESULT },
        { type: 'text', text: W },
      ],
    });
    expect(FORK_PLACEHOLDER_RESULT).toBe('Fork started \u2014 processing in background');
    // the result is a valid history: no dangling tool_use reaches the API
    expect(() => checkHistory(msgs, { allowDanglingAtEnd: false })).not.toThrow();
  });

  it('differs between siblings only in the last text block', () => {
    const a = full('claude', history(), W);
    const b = full('claude', history(), W2);
    expect(a.slice(0, -1)).toEqual(b.slice(0, -1));
    const lastA = a.at(-1)!.content as Anthropic.ContentBlockParam[];
    const lastB = b.at(-1)!.content as Anthropic.ContentBlockParam[];
    expect(lastA.slice(0, -1)).toEqual(lastB.slice(0, -1));
    expect(lastA.at(-1)).not.toEqual(lastB.at(-1));
  });

  it('handles a history that ends with a plain model turn, with the user, or is empty', () => {
    const model = [userText('hi'), modelText('hello')];
    expect(full('claude', model)).toEqual([...model, { role: 'user', content: [{ type: 'text', text: W }] }]);
    const user = [userText('hi'), modelText('hello'), userText('more')];
    expect(full('claude', user).at(-1)).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'more' },
        { type: 'text', text: W },
      ],
    });
    expect(full('claude', [])).toEqual([{ role: 'user', content: [{ type: 'text', text: W }] }]);
  });

  it('does not modify the parent history', () => {
    const h = history();
    const before = JSON.stringify(h);
    full('claude', h);
    expect(JSON.stringify(h)).toBe(before);
  });
});

describe('qwen layout', () => {
  it('ends with model and calls: placeholders + directive, the acknowledgement, then Begin.', () => {
    const msgs = full('qwen', history());
    expect(msgs.slice(-3)).toEqual([
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_02', content: FORK_PLACEHOLDER_RESULT },
          { type: 'tool_result', tool_use_id: 'toolu_03', content: FORK_PLACEHOLDER_RESULT },
          { type: 'text', text: W },
        ],
      },
      { role: 'assistant', content: [{ type: 'text', text: QWEN_ACK }] },
      { role: 'user', content: [{ type: 'text', text: QWEN_BEGIN }] },
    ]);
    expect(QWEN_ACK).toBe('Understood. Executing directive now.');
    expect(() => checkHistory(msgs, { allowDanglingAtEnd: false })).not.toThrow();
  });

  it('ends with model without calls: history unchanged, the directive as the task prompt', () => {
    const model = [userText('hi'), modelText('hello')];
    const plan = planFork(model, 'qwen');
    expect(plan.historyCase).toBe('ends-with-model');
    expect(full('qwen', model)).toEqual([...model, { role: 'user', content: [{ type: 'text', text: W }] }]);
  });

  it('ends with user: the trailing user message is dropped', () => {
    const h = [userText('hi'), modelText('hello'), userText('unusual')];
    expect(planFork(h, 'qwen').historyCase).toBe('ends-with-user');
    expect(full('qwen', h)).toEqual([
      userText('hi'),
      modelText('hello'),
      { role: 'user', content: [{ type: 'text', text: W }] },
    ]);
    expect(full('qwen', [userText('only')])).toEqual([{ role: 'user', content: [{ type: 'text', text: W }] }]);
  });

  it('ends with user after calls: dropping it would leave calls dangling, so they get placeholders', () => {
    const h = history();
    h.push({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_02', content: 'r' },
        { type: 'tool_result', tool_use_id: 'toolu_03', content: 'r' },
      ],
    });
    const msgs = full('qwen', h);
    expect(() => checkHistory(msgs, { allowDanglingAtEnd: false })).not.toThrow();
    expect(msgs.at(-1)).toEqual({ role: 'user', content: [{ type: 'text', text: QWEN_BEGIN }] });
  });

  it('empty: nothing shared, the directive alone', () => {
    expect(planFork([], 'qwen').shared).toEqual([]);
    expect(full('qwen', [])).toEqual([{ role: 'user', content: [{ type: 'text', text: W }] }]);
  });

  it('rejects an unknown layout by name', () => {
    expect(() => planFork([], 'gemini' as 'qwen')).toThrow(/layout: expected one of claude, qwen, got "gemini"/);
  });
});
