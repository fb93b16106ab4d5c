import { ForkcacheError } from '../core/util/errors.ts';
import type { FanOut, FanOutResult } from '../core/agent/fork-handle.ts';
import { resumeCommand } from './output/resume-hint.ts';
import { notDoneForks } from './output/summary-table.ts';

/** Exit code of a run stopped by Ctrl-C (128 + SIGINT), as shells report it. */
export const INTERRUPTED_EXIT_CODE = 130;

/** How long forks get to stop on their own after Ctrl-C before their threads are ended. */
const INTERRUPT_GRACE_MS = 3_000;

interface InterruptOptions {
  /**
   * Ends the forks that did not stop in time (`engine.destroy()`: their threads are
   * terminated, they end `cancelled`), so the summary is printed even when a fork is stuck in
   * code that never looks at its signal.
   */
  stop?: (() => Promise<void>) | undefined;
  graceMs?: number | undefined;
  /** Injected for tests; default `setTimeout` (unref'd: it never keeps the process alive). */
  schedule?: ((run: () => void, ms: number) => { cancel(): void }) | undefined;
}

function defaultSchedule(run: () => void, ms: number): { cancel(): void } {
  const timer = setTimeout(run, ms);
  timer.unref();
  return { cancel: () => clearTimeout(timer) };
}

/**
 * Ctrl-C during a run is graceful and bounded: the first SIGINT cancels every running fork
 * (their turns and tool calls stop, transcripts end `cancelled`); forks still running after
 * `graceMs` are stopped by `stop`, and a second Ctrl-C stops them at once. Either way the run
 * ends with its summary; only a third Ctrl-C quits without one. `interrupted` tells the caller
 * to exit with 130.
 */
export function cancelOnInterrupt(
  log: (line: string) => void,
  options: InterruptOptions = {},
): {
  watch(fan: FanOut): void;
  readonly interrupted: boolean;
  /** Aborted at the first Ctrl-C: what else the run does (a parent agent's turns) stops with it. */
  readonly signal: AbortSignal;
  dispose(): void;
} {
  const fans: FanOut[] = [];
  const running = new Set<FanOut>();
  const abort = new AbortController();
  const schedule = options.schedule ?? defaultSchedule;
  let signals = 0;
  let grace: { cancel(): void } | undefined;
  let stopping: Promise<void> | undefined;
  const stopNow = (): void => {
    grace?.cancel();
    // every fork stopped in time: nothing to end (the run may still be printing its summary)
    if (stopping || !options.stop || (fans.length > 0 && running.size === 0)) return;
    log('interrupted: stopping the forks that are still running');
    stopping = options
      .stop()
      .catch((err: unknown) => log(`interrupted: could not stop the forks: ${(err as Error).message}`));
  };
  const onSignal = (): void => {
    signals += 1;
    if (signals === 1) {
      log('interrupted: cancelling the running forks (Ctrl-C again to stop them now)');
      abort.abort(new ForkcacheError('FORK_CANCELLED', 'interrupted (Ctrl-C)'));
      for (const fan of fans) fan.cancel();
      grace = schedule(stopNow, options.graceMs ?? INTERRUPT_GRACE_MS);
    } else if (signals === 2 && options.stop) stopNow();
    else process.exit(INTERRUPTED_EXIT_CODE);
  };
  process.on('SIGINT', onSignal);
  return {
    watch(fan) {
      fans.push(fan);
      running.add(fan);
      const settle = (): void => void running.delete(fan);
      fan.settled().then(settle, settle);
      if (signals > 0) fan.cancel();
    },
    get interrupted() {
      return signals > 0;
    },
    signal: abort.signal,
    dispose() {
      grace?.cancel();
      process.off('SIGINT', onSignal);
    },
  };
}

/**
 * The last line of an interrupted run: how many forks did not complete, and the command that
 * continues it (the run directory absolute). Undefined when there is nothing to resume.
 */
export function interruptedLine(result: FanOutResult): string | undefined {
  // `no_change` forks are done unless the plan requires a change (summary-table's rule)
  const left = notDoneForks(result);
  if (left.length === 0 || !result.summary.run_dir) return undefined;
  const cancelled = left.filter((f) => f.status === 'cancelled').length;
  const other = left.length - cancelled;
  const counts = [`${cancelled} cancelled`, ...(other > 0 ? [`${other} not done`] : [])].join(', ');
  return `${counts} — resume with: ${resumeCommand(result.summary.run_dir)}`;
}
