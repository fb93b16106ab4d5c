import { describe, expect, it } from 'vitest';
import type { FanOutEvent, ForkResult } from '../../../src/core/agent/fork-handle.ts';
import { BoardState, labelOf } from '../../../src/cli/board/board-state.ts';

const end = (forkId: string, at: number, status: ForkResult['status'], result = 'renamed 1'): FanOutEvent => ({
  type: 'fork-end',
  forkId,
  at,
  status,
  result: { turns: 2, toolCalls: 1, report: { result, files: [], missing: [], preamble: '' } } as unknown as ForkResult,
});

describe('the board state', () => {
  it('counts a completed fork whose report says "not done" as not done (issue 23)', () => {
    const state = new BoardState('claude-sonnet-4-6');
    state.plan([
      { forkId: 'f1', directive: 'x' },
      { forkId: 'f2', directive: 'y' },
    ]);
    state.onEvent({ type: 'fork-start', forkId: 'f1', at: 0 });
    state.onEvent({ type: 'fork-start', forkId: 'f2', at: 0 });
    state.onEvent(end('f1', 10, 'completed'));
    const row = state.onEvent(end('f2', 20, 'completed', 'not done'));
    expect(row.status).toBe('not done');
    expect(state.counts()).toEqual({ queued: 0, running: 0, done: 1, notDone: 1 });
  });

  it('estimates the time left from the rate forks ended at, on the events clock', () => {
    const state = new BoardState('claude-sonnet-4-6');
    state.plan(Array.from({ length: 10 }, (_, i) => ({ forkId: `f${i}`, directive: 'x' })));
    expect(state.etaMs(0)).toBeUndefined();
    state.onEvent({ type: 'fork-start', forkId: 'f0', at: 1000 });
    state.onEvent({ type: 'fork-start', forkId: 'f1', at: 1000 });
    state.onEvent(end('f0', 3000, 'completed'));
    state.onEvent(end('f1', 5000, 'completed'));
    // 2 ended in 4 s: 2 s a fork, 8 left
    expect(state.etaMs(5000)).toBe(16_000);
  });

  it('labels a fork with the file its directive names, else the directive', () => {
    expect(labelOf('rename fetchData to loadData in src/features/users.ts')).toBe('src/features/users.ts');
    expect(labelOf('fix the typo in README.md, then report')).toBe('README.md');
    expect(labelOf('summarise the design\nin three lines')).toBe('summarise the design');
  });
});
