import type { ForkReport } from './report.ts';

/**
 * Whether a fork's structured report says it did not do its directive (`Result: not done…`).
 * A fork that ends `completed` with such a report did nothing: the board and the report show
 * it as not done.
 */
export function reportSaysNotDone(report: Pick<ForkReport, 'result'> | undefined): boolean {
  const result = report?.result?.trim();
  return result !== undefined && /^not done\b/i.test(result);
}
