import { afterEach, describe, expect, it } from 'vitest';
import { cancelOnInterrupt, interruptedLine } from '../../src/cli/interrupt.ts';
import type { FanOut } from '../../src/core/agent/fork-handle.ts';

// Issue 15, case 2: a fork stuck in code that never looks at its signal kept the run alive
// after the first Ctrl-C, and the second one quit without the summary. Now a grace period
// (an injected timer here: no waiting) or a second Ctrl-C stops the stuck forks, and the run
// still ends with its summary.

function manualTimer() {
  const due: { run: () => void; ms: number; cancelled: boolean }[] = [];
  return {
    due,
    schedule: (run: () => void, ms: number) => {
      const entry = { run, ms, cancelled: false };
      due.push(entry);
      return { cancel: () => void (entry.cancelled = true) };
    },
    fire: () => due.filter((d) => !d.cancelled).forEach((d) => d.run()),
  };
}

let dispose: (() => void) | undefined;
afterEach(() => dispose?.());

describe('Ctrl-C is bounded (issue 15, case 2)', () => {
  it('cancels the forks, then stops the ones still running when the grace period ends', async () => {
    const timer = manualTimer();
    const stops: string[] = [];
    const lines: string[] = [];
    const cancelled: string[] = [];
    const interrupt = cancelOnInterrupt((l) => lines.push(l), {
      stop: async () => void stops.push('stop'),
      graceMs: 3000,
      schedule: timer.schedule,
    });
    dispose = interrupt.dispose;
    interrupt.watch({ cancel: () => cancelled.push('fan'), settled: () => new Promise(() => {}) } as unknown as FanOut);
    process.emit('SIGINT');
    expect(interrupt.interrupted).toBe(true);
    expect(cancelled).toEqual(['fan']);
    expect(timer.due.map((d) => d.ms)).toEqual([3000]);
    expect(stops).toEqual([]); // the forks get their grace period first
    timer.fire();
    expect(stops).toEqual(['stop']);
    expect(lines.at(-1)).toBe('interrupted: stopping the forks that are still running');
  });

  it('a second Ctrl-C stops the forks at once instead of quitting without the summary', () => {
    const timer = manualTimer();
    const stops: string[] = [];
    const interrupt = cancelOnInterrupt(() => {}, {
      stop: async () => void stops.push('stop'),
      schedule: timer.schedule,
    });
    dispose = interrupt.dispose;
    process.emit('SIGINT');
    process.emit('SIGINT'); // before this change: process.exit(130), no summary
    expect(stops).toEqual(['stop']);
    timer.fire(); // the grace timer was cancelled: nothing stops twice
    expect(stops).toEqual(['stop']);
  });
});

describe('the resume line of an interrupted run', () => {
  const result = (statuses: string[], requireChange = false) =>
    ({
      fanoutId: 'fo',
      forks: statuses.map((status, i) => ({ forkId: `f${i}`, status })),
      summary: { run_dir: '/runs/fo', require_change: requireChange },
    }) as unknown as Parameters<typeof interruptedLine>[0];

  it('counts no_change forks as done (issue 34: "199 cancelled, 101 not done" were no_change forks)', () => {
    const line = interruptedLine(result(['cancelled', 'cancelled', 'no_change', 'completed', 'failed']));
    expect(line).toMatch(/^2 cancelled, 1 not done — resume with: /);
  });

  it('counts them not done when the plan requires a change', () => {
    const line = interruptedLine(result(['cancelled', 'no_change', 'completed'], true));
    expect(line).toMatch(/^1 cancelled, 1 not done — resume with: /);
  });
});
