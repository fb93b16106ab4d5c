import type Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { addPrompt, forkOutcome, startForkState } from '../../../src/core/loop/fork-state.ts';
import type { TranscriptSink } from '../../../src/core/loop/transcript-sink.ts';
import type { CheckRecord, LoopPrompt } from '../../../src/core/loop/types.ts';

const REPORT = 'Scope: users.ts\nResult: renamed fetchData to loadData\nFiles changed: users.ts';
const earlier: Anthropic.MessageParam[] = [{ role: 'assistant', content: [{ type: 'text', text: 'turn 1' }] }];

describe('startForkState: the fork before its first request', () => {
  it('continues from the turns done, owns a copy of its earlier messages, has sent the head', () => {
    const state = startForkState(earlier, 1234, 3);
    expect(state).toMatchObject({ turn: 3, toolCalls: 0, finalText: '', sentBytes: 1234, own: earlier });
    state.own.push({ role: 'user', content: 'more' });
    expect(earlier).toHaveLength(1);
    expect(startForkState([], 10, undefined).turn).toBe(0);
  });
});

describe('addPrompt', () => {
  it('adds the user turn to the conversation and records it after the current turn', () => {
    const recorded: unknown[] = [];
    const state = startForkState(earlier, 0, 4);
    const prompt: LoopPrompt = { reason: 'continue', text: 'continue' };
    addPrompt(
      state,
      { prompt: (record) => recorded.push(record) } as Partial<TranscriptSink> as TranscriptSink,
      prompt,
    );
    expect(state.own.at(-1)?.role).toBe('user');
    expect(JSON.stringify(state.own.at(-1))).toContain('continue');
    expect(recorded).toEqual([{ turn: 4, reason: 'continue', text: 'continue' }]);
    addPrompt(state, undefined, prompt);
    expect(state.own).toHaveLength(3);
  });
});

describe('forkOutcome: what the fork produced', () => {
  const state = () => {
    const s = startForkState([], 0, 2);
    s.finalText = REPORT;
    s.toolCalls = 5;
    s.filesChanged.add('z.ts').add('a.ts');
    s.notApplied.set('b.ts', 'TOOL_EDIT_CONFLICT').set('a.ts', 'TOOL_INPUT_INVALID');
    return s;
  };

  it('parses the final answer as the report of an ending the fork chose; sorts its files', () => {
    const outcome = forkOutcome(state(), 'completed');
    expect(outcome).toMatchObject({ status: 'completed', turns: 2, toolCalls: 5, finalText: REPORT });
    expect(outcome.report?.scope).toBe('users.ts');
    expect(outcome.filesChanged).toEqual(['a.ts', 'z.ts']);
    expect(outcome.editsNotApplied).toEqual([
      { path: 'a.ts', code: 'TOOL_INPUT_INVALID' },
      { path: 'b.ts', code: 'TOOL_EDIT_CONFLICT' },
    ]);
    expect('checks' in outcome).toBe(false);
    expect('error' in outcome).toBe(false);
    expect(forkOutcome(state(), 'not_done').report?.result).toBe('renamed fetchData to loadData');
  });

  it('has no report when an error, a cancel or the spend cap ended the fork; keeps the error and the checks', () => {
    const error = { code: 'FORK_CANCELLED', message: 'fork cancelled' };
    for (const status of ['failed', 'cancelled', 'capped'] as const)
      expect(forkOutcome(state(), status, error)).toMatchObject({ status, report: undefined, error });
    const withCheck = state();
    const check = { turn: 2, attempt: 1, command: 'npm test', passed: true } as CheckRecord;
    withCheck.checks.push(check);
    expect(forkOutcome(withCheck, 'completed').checks).toEqual([check]);
  });
});
