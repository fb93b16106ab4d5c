import { ForkcacheError, isReadableCode, type WireError } from '../../../core/util/errors.ts';
import type { ForkHostReport, ForkOutcome, LoopEvent } from '../../../core/loop/types.ts';
import type { DispatchContext } from '../../../core/pool/fork-dispatch.ts';
import type { ForkJobProgress } from '../keys.ts';
import type { JobSigner } from '../jobs/signing.ts';
import { outcomeFromTranscript } from './transcript-outcome.ts';

/** A job's `failedReason` (plain text in Redis) as an error: `CODE: message` when its host gave a code. */
export function failureOf(jobId: string, failedReason: string | undefined): WireError {
  const reason = failedReason ?? 'no reason given';
  const coded = /^([A-Z][A-Z0-9_]+): ([\s\S]*)$/.exec(reason);
  if (coded && isReadableCode(coded[1]!)) return { code: coded[1]!, message: `job ${jobId}: ${coded[2]!}` };
  return new ForkcacheError('FORK_WORKER_FAILED', `job ${jobId} failed: ${reason}`).toWire();
}

/**
 * One fork's job while the submitter waits for it. It ends exactly once, by whichever comes
 * first: its host's signed result, its failure, its removal while waiting (cancelled), a lost
 * Redis or a stopped engine (both read from the transcript).
 */
export class InFlight {
  readonly jobId: string;
  readonly ctx: DispatchContext;
  readonly outcome: Promise<ForkOutcome>;
  /** The submitter asked to cancel it (a missing job is then cancelled, not lost). */
  cancelRequested = false;
  /** A `response-start` was seen: the next `turn-end` completes the first request of this job. */
  sawStart = false;
  /** What the submitter does with each of its host's events besides passing them on (the warm-first barrier). */
  onEvent: (event: LoopEvent) => void = () => undefined;
  #host: string | undefined;
  /** What its host said it applies (signed progress): kept on an outcome read from the transcript. */
  hostReport: ForkHostReport | undefined;
  #settled = false;
  #resolve!: (outcome: ForkOutcome) => void;

  constructor(jobId: string, ctx: DispatchContext) {
    this.jobId = jobId;
    this.ctx = ctx;
    this.outcome = new Promise((resolve) => (this.#resolve = resolve));
  }

  /** The host that reported last: the fork is named to run there when it changes (another host took over). */
  onHost(hostId: string): void {
    if (hostId === this.#host) return;
    this.#host = hostId;
    this.ctx.onHost?.(hostId);
  }

  get settled(): boolean {
    return this.#settled;
  }

  settle(outcome: ForkOutcome): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#resolve(outcome.host || !this.hostReport ? outcome : { ...outcome, host: this.hostReport });
  }

  /** Its host's result, if it verifies; otherwise what the transcript says, with the reason. */
  settleResult(signer: JobSigner, value: unknown): void {
    if (this.#settled) return;
    try {
      this.settle(signer.open<ForkOutcome>('result', this.jobId, value));
    } catch (err) {
      this.settle(outcomeFromTranscript(this.ctx, 'failed', (err as ForkcacheError).toWire()));
    }
  }

  settleFailed(failedReason: string | undefined): void {
    this.settleFrom('failed', failureOf(this.jobId, failedReason));
  }

  /** Ends from the transcript: the host cannot say (Redis lost, the job gone, the engine stopped). */
  settleFrom(status: ForkOutcome['status'], error: WireError): void {
    if (this.#settled) return;
    this.settle(outcomeFromTranscript(this.ctx, status, error));
  }

  /** A progress report of its host, if it verifies (a forged one is dropped). */
  progress(signer: JobSigner, value: unknown): ForkJobProgress | undefined {
    try {
      return signer.open<ForkJobProgress>('progress', this.jobId, value);
    } catch {
      return undefined;
    }
  }
}
