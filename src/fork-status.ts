/**
 * How a fork ended. One list for every layer that names statuses (the loop's outcome, the
 * ledger's tree, the handles, transcripts, summaries), so none of them can drift.
 *
 * Only `completed` is success: the fork did its directive (and its check passed, when the plan
 * has one). Anything else is "not done", and a run with such a fork does not exit 0.
 * - `not_done`: the fork answered, but its report says it did not do the work (Result: not
 *   done / failed / could not …), its report lacks a required field (`Scope:`, `Result:`), or
 *   its final text is empty.
 * - `truncated`: its turn stopped at `max_tokens` with no tool call, twice in a row (the loop
 *   asks it once to continue).
 * - `check_failed`: the plan's check command still failed after the fork's retries.
 * - `failed`: an error ended it (the API, max turns, a worker that could not start …).
 * - `cancelled`: it was stopped (Ctrl-C, `cancel()`, the engine destroyed).
 */
export const FORK_END_STATUSES = ['completed', 'not_done', 'truncated', 'check_failed', 'failed', 'cancelled'] as const;

export type ForkEndStatus = (typeof FORK_END_STATUSES)[number];

/**
 * Statuses that end a fork for good unless the user asks to retry them (`resume --retry`):
 * the fork answered, so resuming its conversation alone would only repeat that answer.
 * `failed` and `cancelled` forks are simply continued by `resume`.
 */
export const RETRYABLE_STATUSES = ['not_done', 'truncated', 'check_failed'] as const satisfies readonly ForkEndStatus[];

export type RetryableStatus = (typeof RETRYABLE_STATUSES)[number];

export function isForkEndStatus(value: unknown): value is ForkEndStatus {
  return typeof value === 'string' && (FORK_END_STATUSES as readonly string[]).includes(value);
}

export function isRetryableStatus(value: unknown): value is RetryableStatus {
  return typeof value === 'string' && (RETRYABLE_STATUSES as readonly string[]).includes(value);
}
