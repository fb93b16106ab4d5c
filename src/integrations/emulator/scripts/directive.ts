import { REPORT_FIELDS } from '../../../core/wire/fork-text.ts';

/**
 * The directive language the `refactor` model understands (documented in the emulator README):
 *
 *   rename <old> to <new> in <path>        a fork child renames an identifier in one file
 *   rename <old> to <new> across <dir>     a parent fans the rename out, one fork per file
 *   read <path> and report                 a fork child reads a file and reports on it
 *   run `<command>` and report             a fork child runs a shell command (bash) and reports
 *
 * Keywords are case-insensitive; names may be wrapped in backticks or quotes; a final period
 * is ignored; only the first non-empty line counts.
 */
export type Directive =
  | { kind: 'rename-in'; from: string; to: string; path: string }
  | { kind: 'rename-across'; from: string; to: string; dir: string }
  | { kind: 'read'; path: string }
  | { kind: 'run'; command: string }
  | { kind: 'unknown'; text: string };

const unquote = (token: string): string => token.replace(/^[`'"]+|[`'"]+$/g, '');

/** Parse the first line of a directive. */
export function parseDirective(text: string): Directive {
  const line = (text.split('\n').find((l) => l.trim() !== '') ?? '').trim().replace(/\.$/, '');
  const rename = /^rename\s+(\S+)\s+to\s+(\S+)\s+(in|across)\s+(\S+)$/i.exec(line);
  if (rename) {
    const [, from, to, how, where] = rename as unknown as [string, string, string, string, string];
    return how.toLowerCase() === 'in'
      ? { kind: 'rename-in', from: unquote(from), to: unquote(to), path: unquote(where) }
      : { kind: 'rename-across', from: unquote(from), to: unquote(to), dir: unquote(where) };
  }
  const run = /^run\s+`([^`]+)`\s+and\s+report$/i.exec(line);
  if (run) return { kind: 'run', command: run[1]! };
  const read = /^read\s+(\S+)\s+and\s+report$/i.exec(line);
  if (read) return { kind: 'read', path: unquote(read[1]!) };
  return { kind: 'unknown', text: line };
}

export interface ReportFields {
  scope: string;
  result: string;
  keyFiles: readonly string[];
  filesChanged: readonly string[];
  issues: readonly string[];
}

const list = (items: readonly string[]): string => (items.length === 0 ? 'none' : items.join(', '));

/** A fork report in the labelled fields the fork rules ask for, starting with `Scope:`. */
export function formatReport(fields: ReportFields): string {
  const [scope, result, keyFiles, filesChanged, issues] = REPORT_FIELDS;
  return [
    `${scope}: ${fields.scope}`,
    `${result}: ${fields.result}`,
    `${keyFiles}: ${list(fields.keyFiles)}`,
    `${filesChanged}: ${list(fields.filesChanged)}`,
    `${issues}: ${fields.issues.length === 0 ? 'none' : fields.issues.join('; ')}`,
  ].join('\n');
}

/** Regex-escape a literal. */
export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Occurrences of `word` as a whole identifier (not inside a longer one). */
export function wordPattern(word: string): RegExp {
  return new RegExp(`(?<![A-Za-z0-9_$])${escapeRegExp(word)}(?![A-Za-z0-9_$])`, 'g');
}

export function countMatches(text: string, pattern: RegExp): number {
  return text.match(new RegExp(pattern.source, 'g'))?.length ?? 0;
}
