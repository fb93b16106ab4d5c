/** What replaces a secret in tool output. */
export const REDACTED = '[REDACTED]';

/**
 * Shorter values are not treated as secrets: replacing, say, `test` everywhere would mangle
 * output and hide nothing (real keys are tens of characters).
 */
export const MIN_SECRET_LENGTH = 8;

/**
 * A function that removes every secret from a text: the API key and any configured secret
 * that a tool result might carry (`cat .env`, `/proc/$PPID/environ` where bash is not
 * sandboxed). It runs on every tool result before the model, a transcript, a report or stdout
 * can see it. Longest first, so a secret containing another is removed whole.
 */
export function redactor(secrets: readonly string[]): (text: string) => string {
  const list = [...new Set(secrets.filter((s) => s.length >= MIN_SECRET_LENGTH))].sort((a, b) => b.length - a.length);
  if (list.length === 0) return (text) => text;
  return (text) => {
    let out = text;
    for (const secret of list) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
    return out;
  };
}
