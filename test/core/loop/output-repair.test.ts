import type Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../../src/core/util/clock.ts';
import { extractOutput } from '../../../src/core/fork/output.ts';
import { afterFinalTurn, type FinalTurn } from '../../../src/core/loop/final-turn.ts';
import { asUserMessage, outputPrompt, promptReason } from '../../../src/core/loop/prompts.ts';
import type { LoopOutput } from '../../../src/core/loop/types.ts';

// The output schema's rule in the loop: one repair turn, decided from the fork's own
// conversation (so a fork resumed from its transcript decides the same), then invalid_output.

const REPORT = 'Scope: x\nResult:\n```json\n{"a":1}\n```\nKey files: none\nFiles changed: none\nIssues: none';
const assistant = (text: string): Anthropic.MessageParam => ({ role: 'assistant', content: [{ type: 'text', text }] });
const directive: Anthropic.MessageParam = { role: 'user', content: [{ type: 'text', text: 'Directive: x' }] };

function turn(own: Anthropic.MessageParam[], output: LoopOutput, turnsLeft = 10): FinalTurn {
  return {
    turn: own.filter((m) => m.role === 'assistant').length,
    stopReason: 'end_turn',
    finalText: REPORT,
    own,
    requireReport: true,
    turnsLeft,
    check: undefined,
    output,
    clock: systemClock,
    signal: undefined,
    onCheck: () => {},
  };
}

const never: LoopOutput = { validate: () => Promise.resolve({ ok: false, errors: 'a: expected string' }) };
const always: LoopOutput = { validate: () => Promise.resolve({ ok: true }) };

describe('the output schema in the loop', () => {
  it('a matching report completes the fork', async () => {
    expect(await afterFinalTurn(turn([directive, assistant(REPORT)], always))).toEqual({
      kind: 'end',
      status: 'completed',
    });
  });

  it('a first mismatch is one repair turn quoting the errors; a second ends invalid_output', async () => {
    const first = await afterFinalTurn(turn([directive, assistant(REPORT)], never));
    expect(first.kind).toBe('prompt');
    const prompt = (first as { prompt: ReturnType<typeof outputPrompt> }).prompt;
    expect(prompt.reason).toBe('output');
    expect(prompt.text).toContain('a: expected string');
    expect(promptReason(asUserMessage(prompt))).toBe('output');

    const own = [directive, assistant(REPORT), asUserMessage(prompt), assistant(REPORT)];
    const second = await afterFinalTurn(turn(own, never));
    expect(second).toMatchObject({ kind: 'end', status: 'invalid_output', error: { code: 'FORK_INVALID_OUTPUT' } });
  });

  it('with no turn left for the repair, the fork ends invalid_output at once', async () => {
    const step = await afterFinalTurn(turn([directive, assistant(REPORT)], never, 0));
    expect(step).toMatchObject({ kind: 'end', status: 'invalid_output' });
  });

  it('a report that says it did not do the work is not_done, whatever its value', async () => {
    const failed = { ...turn([directive, assistant(REPORT)], always), finalText: 'Scope: x\nResult: not done' };
    expect(await afterFinalTurn(failed)).toMatchObject({ kind: 'end', status: 'not_done' });
  });
});

describe('the value of a report', () => {
  it('is the last ```json block, else a Result: or a whole text that is JSON', () => {
    expect(extractOutput('```json\n{"a":1}\n```\nthen\n```json\n{"a":2}\n```')).toEqual({ ok: true, value: { a: 2 } });
    expect(extractOutput('Scope: x\nResult: {"a": 3}\nIssues: none')).toEqual({ ok: true, value: { a: 3 } });
    expect(extractOutput(' [1, 2] ')).toEqual({ ok: true, value: [1, 2] });
  });

  it('is missing, or does not parse, with a reason the fork is shown', () => {
    expect(extractOutput('Scope: x\nResult: done')).toMatchObject({ ok: false, message: /no ```json block/ });
    expect(extractOutput('```json\n{"a":\n```')).toMatchObject({ ok: false, message: /does not parse/ });
  });
});
