/**
 * How a fork ended. One list for every layer that names statuses (the loop's outcome, the
 * ledger's tree, the handles, transcripts, summaries), so none of them can drift.
 *
 * `completed` is success: the fork did its directive (and its check passed, when the plan has
 * one). `no_change` is done too, unless the fan-out requires a change (`requireChange`); a run
 * whose forks all ended `no_change` does not exit 0 either. Anything else is "not done", and a
 * run with such a fork does not exit 0.
 * - `no_change`: the fork reported done, and it changed no file (no successful `edit_file` or
 *   `write_file`, and no `bash` that could have written one). Judged for forks with a target
 *   file (the `file` field of a plan made from a glob) and under `requireChange`; the check is
 *   not run, since it verifies a change there is none of.
 * - `not_done`: the fork answered, but its report says it did not do the work (Result: not
 *   done / failed / could not …), its report lacks a required field (`Scope:`, `Result:`), or
 *   its final text is empty.
 * - `truncated`: its turn stopped at `max_tokens` with no tool call, twice in a row (the loop
 *   asks it once to continue).
 * - `check_failed`: the plan's check command still failed after the fork's retries.
 * - `invalid_output`: the fan-out has an output schema (`outputSchema`), and the fork's report
 *   still did not match it after the one repair turn it was given (the validation errors quoted).
 *   Retryable: `resume` checks against the JSON Schema form its manifest recorded (or the schema
 *   passed to it again).
 * - `failed`: an error ended it (the API, max turns, a worker that could not start …).
 * - `capped`: the spend cap (`maxUsd`) admitted no more of its turns; resume with a higher cap.
 * - `cancelled`: it was stopped (Ctrl-C, `cancel()`, the engine destroyed).
 */
export const FORK_END_STATUSES = [
  'completed',
  'no_change',
  'not_done',
  'truncated',
  'check_failed',
  'invalid_output',
  'failed',
  'capped',
  'cancelled',
] as const;

export type ForkEndStatus = (typeof FORK_END_STATUSES)[number];

/**
 * A fork's status at any moment: `queued` (admitted, not yet dispatched), `running`, or how it
 * ended. The one status type of a fork (handles, events, the board); a fork's result and
 * transcript only ever hold a `ForkEndStatus`.
 */
export type ForkStatus = 'queued' | 'running' | ForkEndStatus;

/**
 * An agent's status in the ledger (parent, fork or fresh agent): the ledger hears of an agent
 * with its first request, so it is never `queued`.
 */
export type AgentStatus = Exclude<ForkStatus, 'queued'>;

/**
 * Statuses that end a fork for good unless the user asks to retry them (`resume --retry`):
 * the fork answered, so resuming its conversation alone would only repeat that answer.
 * `failed`, `capped` and `cancelled` forks are simply continued by `resume`.
 */
export const RETRYABLE_STATUSES = [
  'no_change',
  'not_done',
  'truncated',
  'check_failed',
  'invalid_output',
] as const satisfies readonly ForkEndStatus[];

export type RetryableStatus = (typeof RETRYABLE_STATUSES)[number];

export function isForkEndStatus(value: unknown): value is ForkEndStatus {
  return typeof value === 'string' && (FORK_END_STATUSES as readonly string[]).includes(value);
}

export function isRetryableStatus(value: unknown): value is RetryableStatus {
  return typeof value === 'string' && (RETRYABLE_STATUSES as readonly string[]).includes(value);
}

/** Statuses `resume` continues from the transcript (no retry prompt needed). */
const CONTINUED_STATUSES = ['failed', 'capped', 'cancelled'] as const satisfies readonly ForkEndStatus[];

export function isContinuedStatus(value: unknown): boolean {
  return typeof value === 'string' && (CONTINUED_STATUSES as readonly string[]).includes(value);
}

/** A fork that counts as done: `completed`, or `no_change` when the fan-out did not require a change. */
export function isDoneStatus(status: ForkEndStatus | string, requireChange = false): boolean {
  return status === 'completed' || (status === 'no_change' && !requireChange);
}
