import { ForkcacheError } from '../../util/errors.ts';

/*
 * A plan's per-fork `check` is a shell command template: `{name}` is replaced by the fork's
 * field `name` (`{file}` for a plan made from a glob, any field a directive object gives, and
 * `{directive}`, the directive's text). Values are shell-quoted: a file named `$(rm -rf ~).ts`
 * is one argument, never code. `${NAME}` is the shell's own and is left alone.
 */

const PLACEHOLDER = /(?<!\$)\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** The field names a check template uses, in order of first use. */
export function checkPlaceholders(template: string): string[] {
  return [...new Set([...template.matchAll(PLACEHOLDER)].map((m) => m[1]!))];
}

/** `value` as one POSIX shell word: single-quoted, embedded quotes closed and escaped. */
export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/**
 * The check command of one fork: every placeholder replaced by its shell-quoted value. A
 * placeholder the fork has no field for is bad input naming `field` (e.g. `directives[3]`).
 */
export function substituteCheck(template: string, fields: Readonly<Record<string, string>>, field: string): string {
  const missing = checkPlaceholders(template).filter((name) => !Object.hasOwn(fields, name));
  if (missing.length > 0) {
    const known = Object.keys(fields).sort();
    throw new ForkcacheError(
      'INVALID_OPTION',
      `check: ${missing.map((m) => `{${m}}`).join(', ')} is not a field of ${field} (its fields: ${known.map((k) => `{${k}}`).join(', ')})`,
      { data: { field: 'check', fork: field, missing } },
    );
  }
  return template.replace(PLACEHOLDER, (_, name: string) => shellQuote(fields[name]!));
}
