/**
 * Text from the wire (a model name, a path, an upstream's error message) made safe to print on
 * a terminal: every control character is shown as an escape instead of acting. A model name of
 * `\x1b]0;title\x07` set the terminal's title and `\x1b[2J` cleared the screen when the proxy
 * printed it; a `\n` could forge a whole line of output; a bidirectional override (U+202E)
 * reorders what the reader sees. Printable text, any script, is left as it is.
 */

// C0 controls and DEL, C1 controls, the bidi embeddings/overrides/isolates, line/paragraph separators.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const escape = (c: string): string => {
  const code = c.charCodeAt(0);
  return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
};

/** One line of output: every control character, newlines and tabs included, escaped (`\x1b`, `\x0a`, `\u202e`). */
export function terminalSafe(text: string): string {
  return text.replace(CONTROL, escape);
}
