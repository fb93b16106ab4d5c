import type Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { failureEnding, outOfTurns, turnNext } from '../../../src/core/loop/endings.ts';
import { ForkcacheError } from '../../../src/core/util/errors.ts';

const text = { type: 'text', text: 'done', citations: null };
const use = { type: 'tool_use', id: 'tu1', name: 'read_file', input: { path: 'a.ts' } };
const message = (stop_reason: string, content: object[]): Anthropic.Message =>
  ({ id: 'msg', type: 'message', role: 'assistant', model: 'm', content, stop_reason }) as unknown as Anthropic.Message;

describe('turnNext: what a turn leads to', () => {
  it('a refusal ends the fork failed, tool calls or not', () => {
    for (const content of [[text], [text, use]])
      expect(turnNext(message('refusal', content), 7)).toMatchObject({
        kind: 'end',
        status: 'failed',
        error: { code: 'FORK_MODEL_REFUSED', data: { turn: 7 } },
      });
  });

  it('tool calls run, whatever the stop reason', () => {
    for (const stop of ['tool_use', 'max_tokens', 'pause_turn', 'end_turn'])
      expect(turnNext(message(stop, [text, use]), 1)).toEqual({ kind: 'tools', uses: [use] });
  });

  it('a pause without a tool call is sent again; any other turn without one is a final answer', () => {
    expect(turnNext(message('pause_turn', [text]), 1)).toEqual({ kind: 'again' });
    expect(turnNext(message('end_turn', [text]), 1)).toEqual({ kind: 'final', stopReason: 'end_turn' });
    expect(turnNext(message('max_tokens', []), 1)).toEqual({ kind: 'final', stopReason: 'max_tokens' });
  });
});

describe('outOfTurns', () => {
  it('fails the fork naming its limit', () => {
    expect(outOfTurns(12)).toMatchObject({
      status: 'failed',
      error: {
        code: 'FORK_MAX_TURNS',
        message: 'fork stopped after 12 turns without finishing',
        data: { maxTurns: 12 },
      },
    });
  });
});

describe('failureEnding: a loop that threw', () => {
  const aborted = AbortSignal.abort();

  it('is cancelled when the fork was, or the main thread refused a turn for its cancel', () => {
    expect(failureEnding(new Error('socket closed'), aborted, 3)).toMatchObject({
      status: 'cancelled',
      error: { code: 'FORK_CANCELLED', data: { turn: 3 } },
    });
    expect(failureEnding(Object.assign(new Error('denied'), { code: 'FORK_CANCELLED' }), undefined, 2)).toMatchObject({
      status: 'cancelled',
      error: { code: 'FORK_CANCELLED', data: { turn: 2 } },
    });
  });

  it('is capped when the spend cap admitted no more turns, and failed with the error otherwise', () => {
    const cap = new ForkcacheError('SPEND_CAP_MAX_USD', 'the spend cap is reached', {
      data: { maxUsd: 1, spentUsd: 1, nextBoundUsd: 1.5 },
    });
    expect(failureEnding(cap, new AbortController().signal, 4)).toEqual({ status: 'capped', error: cap.toWire() });
    // the ForkcacheError in the cause chain is the one reported
    const budget = new ForkcacheError('FORK_RETRY_BUDGET', 'retries took too long', {
      data: {
        turn: 4,
        attempts: 3,
        spentMs: 9_000,
        budgetMs: 8_000,
        last: { code: 'API_ERROR', message: 'overloaded' },
      },
    });
    expect(failureEnding(new Error('wrapped', { cause: budget }), undefined, 4)).toEqual({
      status: 'failed',
      error: budget.toWire(),
    });
    expect(failureEnding(new TypeError('boom'), undefined, 1)).toMatchObject({
      status: 'failed',
      error: { message: 'boom' },
    });
  });
});
