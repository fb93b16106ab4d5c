import type Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { type LoopSettings, startForkState } from '../../../src/core/loop/fork-state.ts';
import { judgeFinal } from '../../../src/core/loop/judge-final.ts';
import type { TranscriptSink } from '../../../src/core/loop/transcript-sink.ts';
import { type LoopCheck, type LoopEvent, OPEN_GATE } from '../../../src/core/loop/types.ts';
import { createToolExecutor } from '../../../src/core/tools/executor.ts';
import { ManualClock } from '../../../src/core/util/clock.ts';
import { workspace } from '../engine/helpers.ts';

const REPORT = 'Scope: users.ts\nResult: renamed fetchData to loadData';

function setup(finalText: string, maxTurns = 10) {
  const events: LoopEvent[] = [];
  const records: string[] = [];
  const transcript = {
    prompt: (r) => records.push(`prompt ${r.turn} ${r.reason}`),
    check: (r) => records.push(`check ${r.turn} ${r.passed ? 'passed' : 'failed'}`),
  } as Partial<TranscriptSink> as TranscriptSink;
  const loop: LoopSettings = {
    clock: new ManualClock(),
    gate: OPEN_GATE,
    maxTurns,
    maxTokens: 100,
    emit: (e) => events.push(e),
  };
  const last: Anthropic.MessageParam = { role: 'assistant', content: [{ type: 'text', text: finalText }] };
  const state = startForkState([last], 0, 3);
  state.finalText = finalText;
  return { events, records, transcript, loop, state };
}

describe('judgeFinal: a turn without tool calls', () => {
  it('ends the fork when its answer says it is not done', async () => {
    const { records, transcript, loop, state } = setup('I could not find users.ts');
    expect(await judgeFinal({ transcript }, loop, state, 'end_turn')).toMatchObject({
      status: 'not_done',
      error: { code: 'FORK_NOT_DONE', data: { turn: 3 } },
    });
    expect(state.own).toHaveLength(1);
    expect(records).toEqual([]);
    // a fresh agent needs no labelled report
    expect(await judgeFinal({ requireReport: false }, loop, state, 'end_turn')).toEqual({
      status: 'completed',
      error: undefined,
    });
  });

  it('asks a turn cut off at max_tokens to continue, while the fork has turns left', async () => {
    const { records, transcript, loop, state } = setup('half a rep');
    expect(await judgeFinal({ transcript }, loop, state, 'max_tokens')).toBeUndefined();
    expect(state.own.map((m) => m.role)).toEqual(['assistant', 'user']);
    expect(records).toEqual(['prompt 3 continue']);
    const last = setup('half a rep', 3);
    expect(await judgeFinal({}, last.loop, last.state, 'max_tokens')).toMatchObject({
      status: 'truncated',
      error: { code: 'FORK_TRUNCATED' },
    });
  });

  it('runs the plan’s check and records it in the state, the transcript and the events', async () => {
    const { events, records, transcript, loop, state } = setup(REPORT);
    const tools = createToolExecutor({ workspace: workspace() });
    const check: LoopCheck = {
      command: 'exit 3',
      retries: 0,
      run: (signal) => tools.check('exit 3', { signal, timeoutMs: 30_000 }),
    };
    expect(await judgeFinal({ transcript, check }, loop, state, 'end_turn')).toMatchObject({
      status: 'check_failed',
      error: { code: 'FORK_CHECK_FAILED', data: { exitCode: 3 } },
    });
    expect(state.checks).toEqual([expect.objectContaining({ turn: 3, attempt: 1, exitCode: 3, passed: false })]);
    expect(records).toEqual(['check 3 failed']);
    expect(events).toEqual([{ type: 'check-end', turn: 3, at: 0, check: state.checks[0] }]);
  });
});
