import type Anthropic from '@anthropic-ai/sdk';
import type { Clock } from '../util/clock.ts';
import { ForkcacheError, toWireError, type WireError } from '../util/errors.ts';
import { normalizeUsage } from '../ledger/usage.ts';
import { apiErrorType, isApiError } from './api-error.ts';
import { reportOfError } from './error-report.ts';
import { startedMessageOf } from './transport.ts';
import type { RequestReport } from '../rate-limits/report.ts';
import { isRateLimitOrOverload, MAX_GATE_RETRIES } from './rate-limited.ts';
import {
  backoffMs,
  DEFAULT_RETRY_BUDGET_MS,
  DEFAULT_TURN_RETRY,
  isRetryableTurnError,
  retryBudgetError,
  type TurnRetryOptions,
} from './retry.ts';
import type { TranscriptSink } from './transcript-sink.ts';
import type { LoopEvent, RequestGate, RequestRecord } from './types.ts';
import type { ModelTransport } from './transport.ts';

/**
 * The loop's options that sending reads. Kept apart from `ForkLoopOptions` so this module
 * does not import run-fork.ts, which imports it.
 */
export interface SendOptions {
  transport: ModelTransport;
  signal?: AbortSignal | undefined;
  transcript?: TranscriptSink | undefined;
  turnsDone?: number | undefined;
  retry?: TurnRetryOptions | undefined;
  gateRetries?: boolean | undefined;
}

/** What sending one turn needs. */
interface TurnSend {
  options: SendOptions;
  gate: RequestGate;
  clock: Clock;
  body: Uint8Array;
  turn: number;
  maxTokens: number;
  emit: (event: LoopEvent) => void;
  failedAttempts: RequestRecord[];
  sentBytes: number;
}

/** Send a turn; when it fails in a retryable way, send the same bytes again after a backoff. */
export async function sendWithRetries(send: TurnSend): ReturnType<typeof sendThroughGate> {
  const { options, clock, turn, emit } = send;
  // a retry setting written before budgets existed (an older run's manifest) gets the default one
  const retry = { ...DEFAULT_TURN_RETRY, ...options.retry };
  const budgetMs = retry.budgetMs ?? DEFAULT_RETRY_BUDGET_MS;
  let limited = 0;
  let firstFailure: number | undefined;
  // `tries` numbers every attempt (transcript, ledger); `attempt` counts the backoff retries, `limited`
  // the 429/529s the gate owns under admission.
  for (let attempt = 0, tries = 0; ; tries++) {
    const sentAt = clock.now();
    try {
      return await sendThroughGate(send, tries);
    } catch (err) {
      recordFailedAttempt(send, tries, sentAt, err);
      if (options.signal?.aborted || !isRetryableTurnError(err)) throw err;
      // a 429/529 under admission: the gate holds the next attempt for as long as the API asked
      const owned = options.gateRetries === true && isRateLimitOrOverload(err);
      if (owned ? ++limited > MAX_GATE_RETRIES : attempt >= retry.retries) throw err;
      // without admission nothing else waits out a 429's `retry-after` (the SDK never resends):
      // the backoff is at least that long, within the same `maxMs`
      const wait = owned ? 0 : Math.min(retry.maxMs, Math.max(backoffMs(retry, attempt), retryAfterOf(err)));
      const now = clock.now();
      firstFailure ??= now;
      // However the failures come (a 429 every second, a retry-after that cannot be read), a turn
      // retries for a bounded time: then one clear error ends the fork.
      if (now - firstFailure + wait >= budgetMs)
        throw retryBudgetError(turn, tries + 1, now - firstFailure, budgetMs, describeFailure(err), err);
      if (!owned) attempt++;
      emit({
        type: 'turn-retry',
        turn,
        at: now,
        attempt: attempt + limited,
        waitMs: wait,
        error: describeFailure(err),
      });
      await clock.sleep(wait, options.signal);
    }
  }
}

/** The `retry-after` of a 429/529 in milliseconds; 0 when there is none. */
function retryAfterOf(err: unknown): number {
  return isRateLimitOrOverload(err) ? (reportOfError(err).retryAfterMs ?? 0) : 0;
}

/** A failed attempt whose response had begun was billed: keep it for the ledger (issue 15, case 6). */
function recordFailedAttempt(
  { options, clock, turn, emit, failedAttempts }: TurnSend,
  attempt: number,
  sentAt: number,
  err: unknown,
): void {
  const started = startedMessageOf(err);
  if (!started) {
    options.transcript?.attemptFailed?.({ turn, attempt, request: undefined });
    return;
  }
  const at = clock.now();
  const request: RequestRecord = {
    turn,
    requestId: null,
    messageId: started.id,
    usage: normalizeUsage(started.usage),
    stopReason: null,
    sentAt,
    startedAt: sentAt,
    endedAt: at,
  };
  failedAttempts.push(request);
  options.transcript?.attemptFailed?.({ turn, attempt, request });
  emit({ type: 'attempt-failed', turn, at, request });
}

async function sendThroughGate(
  { options, gate, clock, body, turn, maxTokens, emit, sentBytes }: TurnSend,
  attempt: number,
): Promise<{ message: Anthropic.Message; requestId: string | null; sentAt: number; startedAt: number }> {
  const cost = { bytes: body.byteLength, freshBytes: Math.max(0, body.byteLength - sentBytes), maxTokens };
  const permit = await gate.acquire({
    turn,
    first: turn === (options.turnsDone ?? 0) + 1,
    signal: options.signal,
    cost,
  });
  // written ahead once the request is really about to leave (not while it queues for a permit)
  options.transcript?.requestStart?.({ turn, attempt });
  const sentAt = clock.now();
  let startedAt = sentAt;
  let report: RequestReport = { status: null };
  try {
    const sent = await options.transport.send(body, {
      signal: options.signal,
      slot: permit.slot,
      onStart: (_message, rateLimits) => {
        startedAt = clock.now();
        permit.started({ status: 200, rateLimits });
        emit({ type: 'response-start', turn, at: startedAt });
      },
    });
    report = { status: 200, rateLimits: sent.rateLimits, usage: normalizeUsage(sent.message.usage) };
    return { ...sent, sentAt, startedAt };
  } catch (err) {
    report = reportOfError(err);
    throw err;
  } finally {
    permit.release(report);
  }
}

/** An error as the outcome reports it: the forkcache code when there is one, the API status otherwise. */
export function describeFailure(err: unknown): WireError {
  let current: unknown = err;
  for (let depth = 0; depth < 4 && current; depth++) {
    if (current instanceof ForkcacheError) return current.toWire();
    current = (current as { cause?: unknown }).cause;
  }
  if (isApiError(err)) {
    return {
      code: 'FORK_API_ERROR',
      message: err.message,
      data: { status: err.status ?? null, type: apiErrorType(err) ?? null, requestId: err.requestID ?? null },
    };
  }
  return toWireError(err);
}
