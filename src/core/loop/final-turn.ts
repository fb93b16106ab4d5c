import type Anthropic from '@anthropic-ai/sdk';
import type { Clock } from '../util/clock.ts';
import { ForkcacheError, type WireError } from '../util/errors.ts';
import { judgeReport } from '../fork/report.ts';
import { mayHaveChangedFiles } from './messages.ts';
import { checkPrompt, continuePrompt, failedChecksSinceAttempt, outputPrompt, promptReason, tail } from './prompts.ts';
import type { ForkEndStatus } from '../util/fork-status.ts';
import type { CheckRecord, LoopCheck, LoopOutput, LoopPrompt } from './types.ts';

/** What a turn without a tool call leads to: the fork ends, or the loop asks it one more thing. */
type FinalStep = { kind: 'end'; status: ForkEndStatus; error?: WireError } | { kind: 'prompt'; prompt: LoopPrompt };

export interface FinalTurn {
  turn: number;
  stopReason: string | null;
  finalText: string;
  /** The fork's own conversation so far, ending with this turn. */
  own: readonly Anthropic.MessageParam[];
  /** Fork children end with a labelled report; fresh agents need not (see `judgeReport`). */
  requireReport: boolean;
  /** Turns the fork may still make (`maxTurns` minus this one): a prompt needs one. */
  turnsLeft: number;
  check: LoopCheck | undefined;
  /** The fan-out's output schema: the report must hold a matching value (one repair turn). */
  output?: LoopOutput | undefined;
  /** A fork meant to change files: one that reports done having changed none ends `no_change`. */
  judgeChange?: boolean | undefined;
  clock: Clock;
  signal: AbortSignal | undefined;
  onCheck(record: CheckRecord): void;
}

const ended = (
  status: ForkEndStatus,
  code: 'FORK_NOT_DONE' | 'FORK_TRUNCATED' | 'FORK_CHECK_FAILED' | 'FORK_NO_CHANGE' | 'FORK_INVALID_OUTPUT',
  message: string,
  data: { turn: number; exitCode?: number | null; attempts?: number },
): FinalStep => ({
  kind: 'end',
  status,
  error: new ForkcacheError(code, message, { data }).toWire(),
});

/**
 * Decide what a turn that made no tool call means. A turn cut off at `max_tokens` is asked to
 * continue once (a user turn; its limit stays the same, so a model that only needed room for
 * its report finishes, and one that loops is stopped) and ends `truncated` when the
 * continuation is cut off too. A final answer that does not say the work is done ends
 * `not_done`; one meant to change files that changed none ends `no_change`. With an output
 * schema, a report without a matching value gets one repair turn (the errors quoted), then ends
 * `invalid_output`. Otherwise the plan's check runs: its failure is shown to the fork (up to
 * `retries` times) and then ends it `check_failed`. Everything it needs is in `own`, so a fork
 * resumed from its transcript decides the same way.
 */
export async function afterFinalTurn(input: FinalTurn): Promise<FinalStep> {
  const step = await judgeFinalTurn(input);
  if (step.kind === 'end' || input.turnsLeft > 0) return step;
  // the fork would be asked for more, but has no turn left for it: it ends as it stands
  const { turn } = input;
  const why = `and the fork has no turn left (maxTurns)`;
  if (step.prompt.reason === 'continue')
    return ended('truncated', 'FORK_TRUNCATED', `turn ${turn} stopped at max_tokens ${why}`, { turn });
  if (step.prompt.reason === 'output')
    return ended('invalid_output', 'FORK_INVALID_OUTPUT', `the report does not match the output schema ${why}`, {
      turn,
    });
  const last = input.check === undefined ? undefined : `the check \`${input.check.command}\` failed`;
  return ended('check_failed', 'FORK_CHECK_FAILED', `${last ?? 'the check failed'} ${why}`, { turn });
}

async function judgeFinalTurn(input: FinalTurn): Promise<FinalStep> {
  const { turn } = input;
  if (input.stopReason === 'max_tokens') {
    // an empty turn cannot stay in the conversation (the API refuses empty content): nothing to continue
    const last = input.own.at(-1);
    if (Array.isArray(last?.content) && last.content.length === 0)
      return ended('truncated', 'FORK_TRUNCATED', `turn ${turn} stopped at max_tokens before any output`, { turn });
    // the message before this turn: was it already the continuation we asked for?
    if (promptReason(input.own.at(-2)) === 'continue')
      return ended(
        'truncated',
        'FORK_TRUNCATED',
        `turn ${turn} stopped at max_tokens again after it was asked to continue`,
        {
          turn,
        },
      );
    return { kind: 'prompt', prompt: continuePrompt() };
  }
  const verdict = judgeReport(input.finalText, { requireReport: input.requireReport });
  if (!verdict.done) return ended('not_done', 'FORK_NOT_DONE', verdict.reason, { turn });
  if (input.output) {
    const output = await input.output.validate(input.finalText, input.signal);
    input.signal?.throwIfAborted();
    if (!output.ok) {
      // one repair turn: the message before this turn was it already, so the fork ends as it stands
      if (promptReason(input.own.at(-2)) === 'output')
        return ended(
          'invalid_output',
          'FORK_INVALID_OUTPUT',
          `the report does not match the output schema after its repair turn: ${tail(output.errors, 500)}`,
          { turn },
        );
      return { kind: 'prompt', prompt: outputPrompt(output.errors) };
    }
  }
  // before the check: it verifies a change, and there is none to verify
  if (input.judgeChange === true && !mayHaveChangedFiles(input.own))
    return ended('no_change', 'FORK_NO_CHANGE', 'the fork reported done and changed no file', { turn });
  const check = input.check;
  if (!check) return { kind: 'end', status: 'completed' };

  const attempt = failedChecksSinceAttempt(input.own) + 1;
  const started = input.clock.now();
  const result = await check.run(input.signal);
  input.signal?.throwIfAborted();
  const record: CheckRecord = {
    turn,
    attempt,
    command: check.command,
    exitCode: result.exitCode,
    timedOut: result.timedOut,
    durationMs: Math.max(0, input.clock.now() - started),
    outputTail: tail(result.output),
    passed: result.exitCode === 0 && !result.timedOut,
    ...(result.outputs?.length ? { outputs: [...result.outputs] } : {}),
  };
  input.onCheck(record);
  if (record.passed) return { kind: 'end', status: 'completed' };
  const attempts = check.retries + 1;
  if (attempt < attempts) return { kind: 'prompt', prompt: checkPrompt({ ...record, attempts }) };
  const how = record.timedOut ? 'timed out' : `exited with code ${record.exitCode ?? 'none (killed)'}`;
  return ended(
    'check_failed',
    'FORK_CHECK_FAILED',
    `the check \`${check.command}\` ${how} (${attempts} attempt${attempts === 1 ? '' : 's'})`,
    { turn, exitCode: record.exitCode, attempts },
  );
}
