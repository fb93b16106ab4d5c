/**
 * Text from the wire (a model name, a path, an upstream's error message, a fork's report, a
 * file a fork wrote) made safe to print on a terminal: every control character is shown as an
 * escape instead of acting. A model name of `\x1b]0;title\x07` set the terminal's title and
 * `\x1b[2J` cleared the screen when the proxy printed it; `\x1b[2K` and a carriage return in a
 * fork's report erased a line of `run`'s output and forged "all forks completed" in its place;
 * a `\n` could forge a whole line; a bidirectional override (U+202E) reorders what the reader
 * sees. Printable text, any script, is left as it is. The one implementation: the proxy and
 * every CLI command print through it (src/cli/terminal-safe.ts).
 *
 * C0 controls are written `\x1b`; DEL, C1 and the Unicode ones `\u009b`, `\u202e`: JSON escapes
 * of the same form, so a JSON line passed through stays valid JSON (JSON.stringify escapes C0
 * itself, and leaves the others raw).
 */

// C0 controls and DEL, C1 controls, the bidi marks, embeddings, overrides and isolates, line/paragraph separators.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
// the same without newline and tab: what a multi-line text (a diff, a table) keeps
const CONTROL_BUT_LINES =
  // eslint-disable-next-line no-control-regex
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const escape = (c: string): string => {
  const code = c.charCodeAt(0);
  return code < 0x20 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
};

/** One line of output: every control character, newlines and tabs included, escaped (`\x1b`, `\x0a`, `\u202e`). */
export function terminalSafe(text: string): string {
  return text.replace(CONTROL, escape);
}

/** Lines of output: as `terminalSafe`, but newlines and tabs are kept (a diff, a table, a report). */
export function terminalSafeLines(text: string): string {
  return text.replace(CONTROL_BUT_LINES, escape);
}
