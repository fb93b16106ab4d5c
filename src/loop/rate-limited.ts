import Anthropic from '@anthropic-ai/sdk';

/**
 * Consecutive 429/529 answers one turn may get when the gate owns rate-limit retries: the
 * scheduler waits between them (one backoff for the whole fan-out), so this is only a bound
 * against a limit that never clears. Past it the fork stops; its transcript keeps every turn.
 */
export const MAX_GATE_RETRIES = 100;

/** A 429 (rate limit) or 529 (overloaded), also when it arrives mid-stream as an `error` event. */
export function isRateLimitOrOverload(err: unknown): boolean {
  if (!(err instanceof Anthropic.APIError)) return false;
  if (err.status === 429 || err.status === 529) return true;
  const type = (err.error as { error?: { type?: unknown } } | undefined)?.error?.type;
  return err.status === undefined && (type === 'overloaded_error' || type === 'rate_limit_error');
}
