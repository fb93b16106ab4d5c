import type Anthropic from '@anthropic-ai/sdk';
import { ForkcacheError, type WireError } from '../util/errors.ts';
import type { ForkEndStatus } from '../util/fork-status.ts';
import { describeFailure } from './send-turn.ts';

/** How the fork ends: its status, and the error that says why when it did not complete. */
export interface ForkEnding {
  status: ForkEndStatus;
  error?: WireError | undefined;
}

/**
 * What a turn's response leads to: the fork ends (the model refused), the loop sends again (a
 * `pause_turn` without a tool call), the turn is a final answer to judge, or its tool calls run.
 */
type TurnNext =
  | ({ kind: 'end' } & ForkEnding)
  | { kind: 'again' }
  | { kind: 'final'; stopReason: string | null }
  | { kind: 'tools'; uses: Anthropic.ToolUseBlock[] };

export function turnNext(message: Anthropic.Message, turn: number): TurnNext {
  if (message.stop_reason === 'refusal') {
    return {
      kind: 'end',
      status: 'failed',
      error: new ForkcacheError('FORK_MODEL_REFUSED', 'the model refused the directive', { data: { turn } }).toWire(),
    };
  }
  const uses = message.content.filter((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use');
  if (uses.length > 0) return { kind: 'tools', uses };
  if (message.stop_reason === 'pause_turn') return { kind: 'again' };
  return { kind: 'final', stopReason: message.stop_reason };
}

/** The fork has made every turn it may and is not done. */
export function outOfTurns(maxTurns: number): ForkEnding {
  return {
    status: 'failed',
    error: new ForkcacheError('FORK_MAX_TURNS', `fork stopped after ${maxTurns} turns without finishing`, {
      data: { maxTurns },
    }).toWire(),
  };
}

/** How a fork ends when its loop threw during turn `turn`: cancelled, capped by the spend cap, or failed. */
export function failureEnding(err: unknown, signal: AbortSignal | undefined, turn: number): ForkEnding {
  // a turn the main thread refused because the fork was cancelled, its own cancel still on the way
  if (signal?.aborted || (err as { code?: unknown }).code === 'FORK_CANCELLED') {
    return {
      status: 'cancelled',
      error: new ForkcacheError('FORK_CANCELLED', 'fork cancelled', { data: { turn } }).toWire(),
    };
  }
  const failure = describeFailure(err);
  // the spend cap admitted no more of its turns: not a failure, the run goes on under a higher cap
  return { status: failure.code === 'SPEND_CAP_MAX_USD' ? 'capped' : 'failed', error: failure };
}
