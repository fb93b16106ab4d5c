import { isApiError } from './api-error.ts';

/**
 * Consecutive 429/529 answers one turn may get when the gate owns rate-limit retries: the
 * scheduler waits between them (one backoff for the whole fan-out), so this is only a bound
 * against a limit that never clears. Past it the fork stops; its transcript keeps every turn.
 */
export const MAX_GATE_RETRIES = 100;

/**
 * A 429 (rate limit) or 529 (overloaded) answer. An `error` event mid-stream is not one: the
 * request was admitted and its response began; it stays a turn failure (bounded retries).
 */
export function isRateLimitOrOverload(err: unknown): boolean {
  return isApiError(err) && (err.status === 429 || err.status === 529);
}
