import { ForkcacheError } from '../errors.ts';
import { isApiError, isConnectionError, isUserAbort } from '../provider/api-error.ts';

/** Engine-level retries of a whole turn (the SDK already retried the HTTP request itself). */
export interface TurnRetryOptions {
  /** Further attempts after the first (default 3). */
  retries: number;
  /** Backoff: baseMs × 2^attempt, capped at maxMs (defaults 500 ms, 8 s), with the injected clock. */
  baseMs: number;
  maxMs: number;
}

export const DEFAULT_TURN_RETRY: TurnRetryOptions = { retries: 3, baseMs: 500, maxMs: 8_000 };

/**
 * Whether a failed turn may be sent again, byte for byte. Safe because a turn's tools run only
 * after its complete assistant message: a turn that failed had no side effect. Retried: a
 * stream that broke (`event: error`, a reset connection), timeouts, 408/409/429/5xx (the SDK
 * gave up on them). Not retried: bad requests, auth, not found, a drifted prefix, cancellation.
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

export function backoffMs(options: TurnRetryOptions, attempt: number): number {
  return Math.min(options.maxMs, options.baseMs * 2 ** attempt);
}
