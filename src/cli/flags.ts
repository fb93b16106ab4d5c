import { z } from 'zod';
import { ForkcacheError } from '../core/util/errors.ts';

/**
 * A flag whose value must be a plain integer between `min` and `max`: commander hands every
 * value over as a string, and "1e3", "2.5" (or "-1" where `min` is not below 0) must fail,
 * naming the flag. The one integer parser of the command line (`intFlag` is its common case).
 */
export function intFlagIn(min: number, max: number) {
  const kind = min < 0 ? 'an integer' : 'a non-negative integer';
  return z
    .string({ error: (issue) => (issue.input === undefined ? 'required' : `expected ${kind}`) })
    .regex(min < 0 ? /^-?\d+$/ : /^\d+$/, `expected ${kind}`)
    .transform(Number)
    .pipe(
      z
        .number()
        .min(min, `at least ${min.toLocaleString('en-US')}`)
        .max(max, `at most ${max.toLocaleString('en-US')}`),
    );
}

/** A non-negative integer of at most 10,000,000 (a count, a number of tokens). */
export const intFlag = intFlagIn(0, 10_000_000);

/** A flag holding an amount of US dollars: a positive decimal (`0.5`, `12`), at most a million. */
export const usdFlag = z
  .string({ error: 'expected an amount in USD' })
  .regex(/^\d+(\.\d+)?$/, 'expected an amount in USD, e.g. 2.50')
  .transform(Number)
  .pipe(z.number().positive('must be above 0').max(1_000_000, 'at most 1,000,000'));

/** `camelCase` option key → `--kebab-case` flag. */
function flagName(key: string): string {
  return `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
}

/**
 * Validate commander's options with a schema. Errors name the flag and the value given:
 * `--forks: at least 1 (got "0")`, as an `INVALID_FLAG` (exit code 2).
 */
export function parseFlags<S extends z.ZodType>(schema: S, raw: Record<string, unknown>): z.output<S> {
  const result = schema.safeParse(raw);
  if (result.success) return result.data;
  const message = result.error.issues
    .map((issue) => {
      const key = String(issue.path[0] ?? '');
      const got = raw[key] === undefined ? '' : ` (got "${String(raw[key])}")`;
      return `${flagName(key)}: ${issue.message}${got}`;
    })
    .join('; ');
  throw new ForkcacheError('INVALID_FLAG', message, {
    data: { flags: result.error.issues.map((i) => flagName(String(i.path[0]))) },
  });
}
