// What the quick test of a tool result costs against the full redaction pattern: a result that
// holds no form of a secret (most of them) is searched for each form with its line breaks taken
// out; one that may hold a form goes through the pattern that allows a line break between any
// two characters. In one run, on the same --kb KB of source text with --secrets secrets: the
// time per result without a secret (the quick test alone) and with one (the quick test, then
// the pattern), as a ratio.
// Run: npx tsx bench/reliability/redact.ts [--kb 120] [--secrets 5] [--rounds 200]
import { redactor } from '../../src/core/tools/redact.ts';

const arg = (name: string, fallback: number): number => {
  const at = process.argv.indexOf(`--${name}`);
  return at < 0 ? fallback : Number(process.argv[at + 1]);
};
const kb = arg('kb', 120);
const secretCount = arg('secrets', 5);
const rounds = arg('rounds', 200);

const secrets = Array.from({ length: secretCount }, (_, i) => `sk-bench-secret-${i}-${'x'.repeat(24)}${i}`);
const lines: string[] = [];
for (let i = 0, chars = 0; chars < kb * 1000; i++) {
  lines.push(`line ${i}: const value${i} = compute(${i}, "some text here");`);
  chars += lines[i]!.length + 1;
}
const clean = lines.join('\n');
const dirty = `${clean}\n${secrets[0]}`;
const redact = redactor(secrets);

function perCall(text: string): number {
  redact(text); // the first call compiles the pattern
  const t0 = performance.now();
  for (let i = 0; i < rounds; i++) redact(text);
  return (performance.now() - t0) / rounds;
}

const quick = perCall(clean);
const full = perCall(dirty);
if (redact(dirty) === dirty) throw new Error('the secret was not redacted');
console.log(
  JSON.stringify({
    chars: clean.length,
    secrets: secretCount,
    noSecretMs: Math.round(quick * 1000) / 1000,
    withSecretMs: Math.round(full * 1000) / 1000,
    ratio: Math.round((full / quick) * 10) / 10,
  }),
);
