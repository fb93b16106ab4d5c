import { z } from 'zod';
import { RETRYABLE_STATUSES, type RetryableStatus } from '../core/util/fork-status.ts';

/** `--retry all-not-done`: every status a fork can end in without having done its directive. */
export const ALL_NOT_DONE = 'all-not-done';

/**
 * `forkcache resume --retry not_done,check_failed` (or `all-not-done`): the statuses whose forks
 * run again. `completed` never re-runs, and failed or cancelled forks are continued by every
 * resume, so naming them is a mistake the message explains.
 */
export const retryFlag = z
  .string()
  .optional()
  .transform((value, ctx): RetryableStatus[] => {
    if (value === undefined) return [];
    const statuses = new Set<RetryableStatus>();
    for (const item of value.split(',').map((s) => s.trim())) {
      if (item === ALL_NOT_DONE) for (const s of RETRYABLE_STATUSES) statuses.add(s);
      else if ((RETRYABLE_STATUSES as readonly string[]).includes(item)) statuses.add(item as RetryableStatus);
      else {
        const why =
          item === 'completed'
            ? 'completed forks never re-run'
            : item === 'failed' || item === 'cancelled' || item === 'capped'
              ? `${item} forks are continued by every resume, no flag needed`
              : `unknown status "${item}"`;
        ctx.addIssue({
          code: 'custom',
          message: `${why}; expected ${[...RETRYABLE_STATUSES, ALL_NOT_DONE].join(', ')}`,
        });
        return z.NEVER;
      }
    }
    return [...statuses];
  });
