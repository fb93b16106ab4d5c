import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { type LoopSettings, startForkState } from '../../../src/core/loop/fork-state.ts';
import { CUT_OFF_RESULT, recordToolCall, runToolCalls } from '../../../src/core/loop/tool-calls.ts';
import type { TranscriptSink } from '../../../src/core/loop/transcript-sink.ts';
import { type LoopEvent, OPEN_GATE } from '../../../src/core/loop/types.ts';
import { createToolExecutor } from '../../../src/core/tools/executor.ts';
import { ManualClock } from '../../../src/core/util/clock.ts';
import { workspace } from '../engine/helpers.ts';

const call = (id: string, name: string, input: object): Anthropic.ToolUseBlock =>
  ({ type: 'tool_use', id, name, input }) as Anthropic.ToolUseBlock;
const message = (stop_reason: string, uses: Anthropic.ToolUseBlock[]): Anthropic.Message =>
  ({ id: 'msg', content: uses, stop_reason }) as unknown as Anthropic.Message;

describe('recordToolCall: what one call did to files', () => {
  it('counts every call; a successful write changes a file, a failed one is not applied until one succeeds', () => {
    const state = startForkState([], 0, 1);
    const edit = call('e1', 'edit_file', { path: './src/../a.ts' });
    expect(recordToolCall(state, edit, { isError: true, code: 'TOOL_EDIT_CONFLICT', content: 'conflict' })).toBe(
      undefined,
    );
    expect([...state.notApplied]).toEqual([['a.ts', 'TOOL_EDIT_CONFLICT']]);
    expect(state.filesChanged.size).toBe(0);
    expect(recordToolCall(state, call('w1', 'write_file', { path: 'a.ts' }), { isError: false, content: 'ok' })).toBe(
      'a.ts',
    );
    expect(state.notApplied.size).toBe(0);
    expect([...state.filesChanged]).toEqual(['a.ts']);
    expect(recordToolCall(state, call('r1', 'read_file', { path: 'b.ts' }), { isError: false, content: 'x' })).toBe(
      undefined,
    );
    expect(state.toolCalls).toBe(3);
  });
});

describe('runToolCalls: a turn’s tool calls, run through the executor', () => {
  function setup() {
    const ws = workspace({ 'a.ts': 'export const a = 1;\n' });
    const events: LoopEvent[] = [];
    const records: string[] = [];
    const transcript = {
      toolStart: (r) => records.push(`start ${r.id} ${r.name}`),
      toolEnd: (r) => records.push(`end ${r.id} ${r.isError ? 'error' : 'ok'}`),
    } as Partial<TranscriptSink> as TranscriptSink;
    const loop: LoopSettings = {
      clock: new ManualClock(5),
      gate: OPEN_GATE,
      maxTurns: 10,
      maxTokens: 100,
      emit: (e) => events.push(e),
    };
    const options = { tools: createToolExecutor({ workspace: ws }), child: { tailBlocks: [] }, transcript };
    return { ws, events, records, loop, options, state: startForkState([], 0, 2) };
  }

  it('runs each call, records it, and answers them all in one user turn', async () => {
    const { ws, events, records, loop, options, state } = setup();
    const uses = [
      call('r1', 'read_file', { path: 'a.ts' }),
      call('w1', 'write_file', { path: 'b.ts', content: 'export const b = 2;\n' }),
    ];
    await runToolCalls(options, loop, state, message('tool_use', uses), uses);
    expect(readFileSync(join(ws, 'b.ts'), 'utf8')).toBe('export const b = 2;\n');
    expect(records).toEqual(['start r1 read_file', 'end r1 ok', 'start w1 write_file', 'end w1 ok']);
    expect(events).toEqual([
      expect.objectContaining({
        type: 'tool-call',
        turn: 2,
        at: 5,
        name: 'read_file',
        isError: false,
        path: undefined,
      }),
      expect.objectContaining({ type: 'tool-call', turn: 2, name: 'write_file', isError: false, path: 'b.ts' }),
    ]);
    expect(state.own).toHaveLength(1);
    const answer = state.own[0]!;
    expect(answer.role).toBe('user');
    expect((answer.content as Anthropic.ToolResultBlockParam[]).map((b) => [b.tool_use_id, b.is_error])).toEqual([
      ['r1', undefined],
      ['w1', undefined],
    ]);
    expect(JSON.stringify(answer.content)).toContain('export const a = 1;');
    expect(state).toMatchObject({ toolCalls: 2, filesChanged: new Set(['b.ts']) });
  });

  it('does not run the last call of a turn cut off at max_tokens: it is answered as cut off', async () => {
    const { ws, events, loop, options, state } = setup();
    const uses = [
      call('w1', 'write_file', { path: 'b.ts', content: 'b\n' }),
      call('w2', 'write_file', { path: 'c.ts', content: 'c' }),
    ];
    await runToolCalls(options, loop, state, message('max_tokens', uses), uses);
    expect(existsSync(join(ws, 'b.ts'))).toBe(true);
    expect(existsSync(join(ws, 'c.ts'))).toBe(false);
    const results = state.own[0]!.content as Anthropic.ToolResultBlockParam[];
    expect(results[1]).toEqual({
      type: 'tool_result',
      tool_use_id: 'w2',
      content: CUT_OFF_RESULT.content,
      is_error: true,
    });
    expect(events.at(-1)).toMatchObject({ name: 'write_file', isError: true, code: 'TOOL_INPUT_INVALID' });
    expect([...state.notApplied]).toEqual([['c.ts', 'TOOL_INPUT_INVALID']]);
  });

  it('stops before a call once the fork is cancelled', async () => {
    const { ws, loop, options, state } = setup();
    const uses = [call('w1', 'write_file', { path: 'b.ts', content: 'b\n' })];
    await expect(
      runToolCalls({ ...options, signal: AbortSignal.abort() }, loop, state, message('tool_use', uses), uses),
    ).rejects.toThrow();
    expect(existsSync(join(ws, 'b.ts'))).toBe(false);
    expect(state.own).toEqual([]);
  });
});
