import type { ForkEnding } from './endings.ts';
import { afterFinalTurn } from './final-turn.ts';
import { addPrompt, type ForkState, type LoopSettings } from './fork-state.ts';
import type { TranscriptSink } from './transcript-sink.ts';
import type { LoopCheck, LoopOutput } from './types.ts';

/** The loop's options that judging a final turn reads (a `ForkLoopOptions` is one). */
interface JudgeFinalOptions {
  requireReport?: boolean | undefined;
  check?: LoopCheck | undefined;
  output?: LoopOutput | undefined;
  judgeChange?: boolean | undefined;
  signal?: AbortSignal | undefined;
  transcript?: TranscriptSink | undefined;
}

/**
 * A turn without tool calls (`afterFinalTurn` decides what it means): the fork's ending, or
 * undefined when the loop asked the fork for more (the prompt is added to its conversation).
 * The plan's check, when it runs, is recorded in the state, the transcript and the events.
 */
export async function judgeFinal(
  options: JudgeFinalOptions,
  loop: LoopSettings,
  state: ForkState,
  stopReason: string | null,
): Promise<ForkEnding | undefined> {
  const { clock, emit } = loop;
  const step = await afterFinalTurn({
    turn: state.turn,
    stopReason,
    finalText: state.finalText,
    own: state.own,
    requireReport: options.requireReport ?? true,
    turnsLeft: loop.maxTurns - state.turn,
    check: options.check,
    output: options.output,
    judgeChange: options.judgeChange,
    clock,
    signal: options.signal,
    onCheck: (record) => {
      state.checks.push(record);
      options.transcript?.check?.(record);
      emit({ type: 'check-end', turn: record.turn, at: clock.now(), check: record });
    },
  });
  if (step.kind === 'end') return { status: step.status, error: step.error };
  addPrompt(state, options.transcript, step.prompt);
  return undefined;
}
