import { ForkcacheError } from '../util/errors.ts';
import type { ForkChild } from './layouts.ts';
import {
  DIRECTIVE_PREFIX,
  FORK_BOILERPLATE_CLOSE,
  FORK_BOILERPLATE_OPEN,
  FORK_BOILERPLATE_TAG,
  REPORT_FIELDS,
} from '../wire/fork-text.ts';

/**
 * The rules every fork child receives, before its directive. A constant: the same bytes for
 * every child, so it could even be cached; only the directive after it differs.
 */
export const FORK_BOILERPLATE = [
  FORK_BOILERPLATE_OPEN,
  'You are a fork: a copy of the main agent, started to carry out one directive. You are not the main agent.',
  'Rules:',
  '1. Any advice in the system prompt to fork or delegate work is for the main agent. Do not spawn sub-agents or forks; do the work yourself.',
  '2. Do not converse and do not ask questions: nobody will answer. Decide and act.',
  '3. Use your tools directly. Do not write text between tool calls.',
  '4. Stay inside the scope of the directive. Do not change anything it does not ask for.',
  `5. When you are done, report once, in plain text, with these labelled fields in this order, starting with "${REPORT_FIELDS[0]}:": ${REPORT_FIELDS.map((f) => `${f}:`).join(' ')} Keep the report under 500 words.`,
  FORK_BOILERPLATE_CLOSE,
].join('\n');

/** Default upper bound for one directive (characters); the API's own limit is far larger. */
const DEFAULT_MAX_DIRECTIVE_CHARS = 100_000;

// A directive may quote the tag (e.g. a task about forkcache itself) but must never close
// or re-open it: the `<` of any tag-like occurrence is escaped, whatever its case or spacing.
const TAG_LIKE = new RegExp(`<(\\s*\\/?\\s*)(${FORK_BOILERPLATE_TAG})`, 'gi');
const HAS_TAG = new RegExp(`<\\s*\\/?\\s*${FORK_BOILERPLATE_TAG}`, 'i');

/** Neutralise anything in a directive that could forge or close the boilerplate tag. */
export function escapeDirective(directive: string): string {
  return directive.replace(TAG_LIKE, '&lt;$1$2');
}

export interface WrapOptions {
  maxChars?: number;
  /**
   * Refuse a directive that contains the tag (the engine does: it is bad input). Without it the
   * tag is escaped, so a library caller can still never forge or close it.
   */
  rejectTag?: boolean;
  /** Which field to name in errors (e.g. `directives[3]`). */
  field?: string;
}

/** Check a directive: non-empty after trimming, and not over the size limit. */
export function validateDirective(directive: unknown, options: WrapOptions = {}): string {
  const field = options.field ?? 'directive';
  if (typeof directive !== 'string') {
    throw new ForkcacheError(
      'INVALID_OPTION',
      `${field}: expected a string, got ${directive === null ? 'null' : typeof directive}`,
      { data: { field } },
    );
  }
  if (directive.trim() === '') {
    throw new ForkcacheError('FORK_EMPTY_DIRECTIVE', `${field}: a directive must not be empty`, { data: { field } });
  }
  const max = options.maxChars ?? DEFAULT_MAX_DIRECTIVE_CHARS;
  if (directive.length > max) {
    throw new ForkcacheError(
      'FORK_DIRECTIVE_TOO_LARGE',
      `${field}: ${directive.length} characters, more than the limit of ${max}`,
      {
        data: { field, length: directive.length, max },
      },
    );
  }
  if (options.rejectTag && HAS_TAG.test(directive)) {
    throw new ForkcacheError(
      'FORK_DIRECTIVE_HAS_TAG',
      `${field}: contains the ${FORK_BOILERPLATE_OPEN} tag, which marks fork children; rephrase the directive`,
      {
        data: { field },
      },
    );
  }
  return directive;
}

/** What every wrapped directive opens with: the same bytes for every child, up to its directive. */
export const WRAPPED_DIRECTIVE_OPENING = `${FORK_BOILERPLATE}\n\n${DIRECTIVE_PREFIX}`;

/** The text a fork child receives: the constant boilerplate, then `Directive: <text>`. */
export function wrapDirective(directive: string, options: WrapOptions = {}): string {
  return `${WRAPPED_DIRECTIVE_OPENING}${escapeDirective(validateDirective(directive, options).trim())}`;
}

/**
 * What a fork's transcript `start` line names as its directive: the directive of its child's
 * last tail block (or last message), unwrapped when it is a fork directive.
 */
export function transcriptDirectiveOf(child: ForkChild): string {
  const first = child.tailBlocks.at(-1) ?? child.messages.at(-1);
  const text = first && 'text' in first ? String(first.text) : '';
  return unwrapDirective(text) ?? text;
}

/** The directive of a wrapped text, as escaped (undefined when the text is not a fork directive). */
export function unwrapDirective(text: string): string | undefined {
  if (!text.startsWith(FORK_BOILERPLATE_OPEN)) return undefined;
  const end = text.indexOf(FORK_BOILERPLATE_CLOSE);
  if (end < 0) return undefined;
  const rest = text.slice(end + FORK_BOILERPLATE_CLOSE.length).trimStart();
  return rest.startsWith(DIRECTIVE_PREFIX) ? rest.slice(DIRECTIVE_PREFIX.length) : undefined;
}
