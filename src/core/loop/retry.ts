import { ForkcacheError, type WireError } from '../util/errors.ts';
import { isApiError, isConnectionError, isUserAbort } from './api-error.ts';

/** Engine-level retries of a whole turn (the SDK never resends a request that may be billed). */
export interface TurnRetryOptions {
  /** Further attempts after the first (default 3). */
  retries: number;
  /** Backoff: baseMs × 2^attempt, capped at maxMs (defaults 500 ms, 8 s), with the injected clock. */
  baseMs: number;
  maxMs: number;
  /**
   * The longest a turn goes on retrying, from its first failure (default 10 min), whatever
   * the failures are (429s the gate waits out included): then the fork ends `failed` with
   * `FORK_RETRY_BUDGET`. Checked after each failed attempt, so the wait before the last one
   * may end past it by at most one backoff.
   */
  budgetMs?: number | undefined;
}

/** A turn's retries stop 10 minutes after its first failure unless told otherwise. */
export const DEFAULT_RETRY_BUDGET_MS = 600_000;

export const DEFAULT_TURN_RETRY: TurnRetryOptions = {
  retries: 3,
  baseMs: 500,
  maxMs: 8_000,
  budgetMs: DEFAULT_RETRY_BUDGET_MS,
};

/**
 * Whether a failed turn may be sent again, byte for byte. Safe because a turn's tools run only
 * after its complete assistant message: a turn that failed had no side effect. Retried: a
 * stream that broke (`event: error`, a connection reset or cut mid-body), timeouts,
 * 408/409/429/5xx. Not retried: bad requests, auth, not found, a drifted prefix, cancellation.
 */
export function isRetryableTurnError(err: unknown): boolean {
  if (err instanceof ForkcacheError) return false;
  if (isUserAbort(err)) return false;
  if (isConnectionError(err)) {
    return !((err as { cause?: unknown }).cause instanceof ForkcacheError); // a drift rejected in fetch
  }
  if (isApiError(err)) {
    const status = err.status;
    return status === undefined || status === 408 || status === 409 || status === 429 || status >= 500;
  }
  // a body stream that ended early surfaces as a plain error ("terminated", ECONNRESET)
  return err instanceof Error && err.name !== 'AbortError';
}

const seconds = (ms: number): string => `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;

/** The one error of a turn whose retries ran out of time: it ends the fork `failed` with this code. */
export function retryBudgetError(
  turn: number,
  attempts: number,
  spentMs: number,
  budgetMs: number,
  last: WireError,
  cause: unknown,
): ForkcacheError {
  return new ForkcacheError(
    'FORK_RETRY_BUDGET',
    `turn ${turn}: still failing after ${attempts} attempt(s) over ${seconds(spentMs)}, past the retry budget of ${seconds(budgetMs)} (turnRetry.budgetMs); last error: ${last.code}: ${last.message}`,
    { cause, data: { turn, attempts, spentMs, budgetMs, last } },
  );
}

export function backoffMs(options: TurnRetryOptions, attempt: number): number {
  return Math.min(options.maxMs, options.baseMs * 2 ** attempt);
}
