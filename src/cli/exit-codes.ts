/*
 * What `run`, `resume` and `merge` exit with once their work is merged (or integrated), beside
 * the codes every command has: 0 done, 1 failed work, 2 bad input (src/core/util/errors.ts's exit
 * classes), 3 a spend cap (budget-line.ts), 130 Ctrl-C (interrupt.ts). Documented in one
 * place for users: docs/runs.md, Exit codes.
 */

/** Some forks were integrated (or merged) and the check passed, others were left out. */
export const LEFT_OUT_EXIT_CODE = 4;

/** No fork was integrated (or merged): nothing of the run is in the branch. */
export const NOTHING_MERGED_EXIT_CODE = 5;

/**
 * The integration could not be done: its check cannot run (exit 126 or 127: not executable,
 * command not found) or fails on the base without any fork. No fork was integrated or left out.
 */
export const NOT_INTEGRATED_EXIT_CODE = 6;

/**
 * 0 when every fork was integrated (or merged) and, with an integration check, it passed;
 * `LEFT_OUT_EXIT_CODE` when some were and others not; `NOTHING_MERGED_EXIT_CODE` when none was.
 */
export function mergedExitCode(counts: { merged: number; leftOut: number; passed: boolean }): number {
  if (counts.merged === 0 && (counts.leftOut > 0 || !counts.passed)) return NOTHING_MERGED_EXIT_CODE;
  if (counts.leftOut > 0 || !counts.passed) return LEFT_OUT_EXIT_CODE;
  return 0;
}
