import { z } from 'zod';
import { ForkcacheError } from '../util/errors.ts';
import type { ForkCheckSpec } from '../pool/protocol.ts';
import { substituteCheck } from '../tools/checks/command.ts';
import { parseOrThrow } from '../util/validation.ts';
import type { FanOutCheck } from './fan-out/types.ts';

/** A check gets five minutes by default: a type check of a large repository takes a while. */
export const DEFAULT_CHECK_TIMEOUT_MS = 300_000;
export const DEFAULT_CHECK_RETRIES = 1;

const fieldName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'expected a name of letters, digits and _');

/** The schema of `FanOutOptions.check` (the plan's `check`/`checkRetries`/`checkTimeoutMs` map onto it). */
const fanOutCheckSchema = z.strictObject({
  command: z.string().trim().min(1, 'expected a shell command'),
  retries: z.number().int().min(0).max(20).default(DEFAULT_CHECK_RETRIES),
  timeoutMs: z.number().int().positive().default(DEFAULT_CHECK_TIMEOUT_MS),
});

const forkFieldsSchema = z.record(fieldName, z.string());

export type ResolvedCheck = z.output<typeof fanOutCheckSchema>;

/** Each fork's fields and check, or nothing where the fan-out has none. */
export interface ForkChecks {
  check: ResolvedCheck | undefined;
  fields: (Readonly<Record<string, string>> | undefined)[];
  commands: (ForkCheckSpec | undefined)[];
  /** The fan-out requires a change of every fork (`requireChange`): `no_change` is not done. */
  requireChange: boolean;
  /** Per fork: judged for `no_change` (it has a target file, or the fan-out requires a change). */
  judgeChange: boolean[];
}

/**
 * Validate a fan-out's check and fields and substitute the check of every fork. Bad input
 * throws before anything is sent, naming the field: `fields[2].file: expected string`,
 * `check: {file} is not a field of directives[3]`.
 */
export function resolveForkChecks(
  directives: readonly string[],
  options: {
    check?: FanOutCheck | undefined;
    fields?: readonly Readonly<Record<string, string>>[] | undefined;
    requireChange?: boolean | undefined;
  },
): ForkChecks {
  const fields =
    options.fields === undefined
      ? undefined
      : parseOrThrow(z.array(forkFieldsSchema), options.fields, 'INVALID_OPTION', 'fields');
  if (fields !== undefined && fields.length !== directives.length) {
    throw new ForkcacheError(
      'INVALID_OPTION',
      `fields: ${fields.length} entries for ${directives.length} directives (one per directive, in order)`,
      { data: { field: 'fields' } },
    );
  }
  const check =
    options.check === undefined ? undefined : parseOrThrow(fanOutCheckSchema, options.check, 'INVALID_OPTION', 'check');
  const commands = directives.map((directive, i): ForkCheckSpec | undefined =>
    check === undefined
      ? undefined
      : {
          // the directive's own text is always a field; a field named `directive` wins
          command: substituteCheck(check.command, { directive, ...fields?.[i] }, `directives[${i}]`),
          retries: check.retries,
          timeoutMs: check.timeoutMs,
        },
  );
  if (options.requireChange !== undefined && typeof options.requireChange !== 'boolean')
    throw new ForkcacheError('INVALID_OPTION', 'requireChange: expected true or false', {
      data: { field: 'requireChange' },
    });
  const requireChange = options.requireChange === true;
  return {
    check,
    fields: directives.map((_, i) => fields?.[i]),
    commands,
    requireChange,
    // a fork with a target file is there to change it; others (questions, reviews) need not
    judgeChange: directives.map((_, i) => requireChange || fields?.[i]?.['file'] !== undefined),
  };
}
