import { toWireError, type WireError } from '../../../core/util/errors.ts';
import type { ForkOutcome } from '../../../core/loop/types.ts';
import { emptyOutcome, finishedOutcome, mergeOutcome, startFromTranscript } from '../../../core/pool/fork-attempts.ts';
import type { DispatchContext } from '../../../core/pool/fork-dispatch.ts';
import { readTranscript } from '../../../core/run-dir/transcript-reader.ts';

/**
 * What a fork did when its host cannot say so (Redis lost or emptied, a result that does not
 * verify, the run stopped while Redis was down): read from the fork's transcript, which the
 * host appends after every turn, never guessed. A fork whose transcript ends `completed` (or
 * whose last turn was its final answer) is completed; one that ended in another status of its
 * own keeps it; any other ends with `status` and `error`, with the turns it did. Turns the
 * submitter missed are reported to it (the ledger records each turn once).
 */
export function outcomeFromTranscript(
  ctx: Pick<DispatchContext, 'base' | 'transcriptPath' | 'onEvent'>,
  status: ForkOutcome['status'],
  error: WireError,
): ForkOutcome {
  if (!ctx.transcriptPath) return emptyOutcome(status, error);
  let transcript: ReturnType<typeof readTranscript>;
  try {
    transcript = readTranscript(ctx.transcriptPath);
  } catch (err) {
    return emptyOutcome(status, { ...error, message: `${error.message}; ${toWireError(err).message}` });
  }
  if (transcript.turns.length === 0) return emptyOutcome(status, error);
  const start = startFromTranscript(ctx.base, transcript);
  const at = Date.now();
  for (const turn of transcript.turns) ctx.onEvent({ type: 'turn-end', turn: turn.turn, at, request: turn.request });
  for (const request of transcript.failedAttempts)
    ctx.onEvent({ type: 'attempt-failed', turn: request.turn, at, request });
  const finished = finishedOutcome(start, transcript);
  if (finished) return finished;
  const end = transcript.end;
  const own = end && end.status !== 'cancelled' && end.status !== 'completed';
  return {
    ...mergeOutcome(
      start,
      emptyOutcome(own ? end.status : status, own ? ((end.error as WireError | undefined) ?? error) : error),
    ),
    turns: start.turnsDone,
    messages: [...start.child.messages],
  };
}
