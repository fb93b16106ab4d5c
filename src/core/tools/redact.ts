/** What replaces a secret in tool output. */
const REDACTED = '[REDACTED]';

/**
 * Shorter values are not treated as secrets: replacing, say, `test` everywhere would mangle
 * output and hide nothing (real keys are tens of characters).
 */
const MIN_SECRET_LENGTH = 8;

/**
 * The characters of `base64(k filler bytes + secret + anything)` that depend on the secret's
 * bytes alone, for k = 0, 1, 2: a secret inside a larger base64 text (`base64 .env`) shows as
 * one of these three, whatever surrounds it.
 */
function base64Cores(secret: Buffer): string[] {
  const cores: string[] = [];
  for (let k = 0; k < 3; k++) {
    const encoded = Buffer.concat([Buffer.alloc(k), secret]).toString('base64');
    // character i encodes bits [6i, 6i + 6): keep those inside the secret's bits [8k, 8(k + n))
    cores.push(encoded.slice(Math.ceil((8 * k) / 6), Math.floor((8 * (k + secret.length)) / 6)));
  }
  return cores;
}

/**
 * The forms of a secret that redaction removes: as is; reversed (`rev`); base64 in its three
 * alignments, standard and URL-safe; URL-encoded (upper and lower case escapes, `+` for
 * spaces); hex (`xxd -p`, `od`, lower and upper case). Not covered, and said so in
 * docs/security.md: any other transformation (rot13, gzip, base32, a cipher, a hash), a secret
 * split across tool calls or printed in parts, or characters interleaved with others. Keeping
 * bash from seeing a key in the first place is the sandbox's job; this is the last net.
 */
function secretVariants(secret: string): string[] {
  const bytes = Buffer.from(secret, 'utf8');
  const url = encodeURIComponent(secret);
  const b64 = base64Cores(bytes);
  const hex = bytes.toString('hex');
  const variants = [
    secret,
    [...secret].reverse().join(''),
    ...b64,
    ...b64.map((c) => c.replace(/\+/g, '-').replace(/\//g, '_')),
    url,
    url.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()),
    url.replace(/%20/g, '+'),
    hex,
    hex.toUpperCase(),
  ];
  return [...new Set(variants.filter((v) => v.length >= MIN_SECRET_LENGTH))];
}

/** Encoded forms are often wrapped (`base64` at 76 columns, `xxd -p` at 60): a line break may sit anywhere. */
function wrappedPattern(variant: string): string {
  return [...variant].map((c) => c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('(?:\\r?\\n)?');
}

/**
 * A function that removes every secret from a text: the API key and any configured secret
 * that a tool result might carry (`cat .env`, `/proc/$PPID/environ` where bash is not
 * sandboxed), in the forms `secretVariants` lists. It runs on every tool result before the
 * model, a transcript, a report or stdout can see it. Longest first, so a secret containing
 * another is removed whole.
 *
 * The pattern (every form, a line break allowed between any two characters of an encoded one)
 * is large: V8 compiled it on a fork's first tool result in 90 ms for one 49-character key
 * (240 ms at 110 characters), and took 14 ms on the next call, on a 30-byte text.
 * So a text is first looked at cheaply: a match, with its line breaks taken out, is a form
 * with its own taken out, and so it is found whole in the text with every line break taken
 * out. A text where no form is found that way holds none, and is returned as it is; the
 * pattern is built and run only on a text that may hold one.
 */
export function redactor(secrets: readonly string[]): (text: string) => string {
  const list = [...new Set(secrets.filter((s) => s.length >= MIN_SECRET_LENGTH))];
  const variants = [...new Set(list.flatMap(secretVariants))].sort((a, b) => b.length - a.length);
  if (variants.length === 0) return (text) => text;
  const plain = new Set(list);
  const bare = variants.map(withoutBreaks);
  let pattern: RegExp | undefined;
  return (text) => {
    const flat = withoutBreaks(text);
    if (!bare.some((v) => v === '' || flat.includes(v))) return text;
    // one pass: the plain forms as they are, the encoded ones wherever a line break cuts them
    pattern ??= new RegExp(variants.map((v) => (plain.has(v) ? wrappedPlain(v) : wrappedPattern(v))).join('|'), 'g');
    return text.replace(pattern, REDACTED);
  };
}

/** A text with every CR and LF taken out. */
function withoutBreaks(text: string): string {
  return text.includes('\n') || text.includes('\r') ? text.replace(/[\r\n]/g, '') : text;
}

function wrappedPlain(secret: string): string {
  return secret.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
