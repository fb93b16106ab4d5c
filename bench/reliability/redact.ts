// What a fork pays to have its tool results redacted (src/core/tools/redact.ts), in one run,
// each case in a fresh redactor with a key of its own (V8 keeps a compiled pattern per source):
// - `clean`: results that hold no form of the key (almost all of them): looked at with their
//   line breaks taken out, the pattern never built;
// - `holding`: results that hold the key (the pattern is compiled on the first, then run).
// For each: the first call and the mean of the next --calls, on a small result and on --kb KB
// of source text. Ratios `holding / clean`, not times.
// Run: npx tsx bench/reliability/redact.ts [--calls 50] [--kb 200]
import { randomBytes } from 'node:crypto';
import { redactor } from '../../src/core/tools/redact.ts';

const arg = (name: string, fallback: number): number => {
  const at = process.argv.indexOf(`--${name}`);
  return at < 0 ? fallback : Number(process.argv[at + 1]);
};
const calls = arg('calls', 50);
const kb = arg('kb', 200);

const small = 'src/a.ts:1: export const fetchData = 1;\n';
const large = 'export const fetchData = (x: number): number => x * 2; // a line of source\n'.repeat(
  Math.ceil((kb * 1024) / 76),
);

function measure(text: (key: string) => string): { firstMs: number; nextMs: number } {
  // a key of the usual length, new for each case: no compiled pattern is reused
  const key = `sk-ant-api03-${randomBytes(27).toString('base64url')}`;
  const redact = redactor([key]);
  const input = text(key);
  let t = performance.now();
  redact(input);
  const firstMs = performance.now() - t;
  t = performance.now();
  for (let i = 0; i < calls; i++) redact(input);
  return { firstMs, nextMs: (performance.now() - t) / calls };
}

const round = (n: number): number => Math.round(n * 1000) / 1000;
const rows = {
  small: { clean: measure(() => small), holding: measure((key) => `${small}${key}\n`) },
  large: { clean: measure(() => large), holding: measure((key) => `${large}${key}\n`) },
};
console.log(
  JSON.stringify({
    calls,
    largeKb: Math.round(large.length / 1024),
    ...Object.fromEntries(
      Object.entries(rows).map(([size, { clean, holding }]) => [
        size,
        {
          clean: { firstMs: round(clean.firstMs), nextMs: round(clean.nextMs) },
          holding: { firstMs: round(holding.firstMs), nextMs: round(holding.nextMs) },
          firstRatio: round(holding.firstMs / clean.firstMs),
          nextRatio: round(holding.nextMs / clean.nextMs),
        },
      ]),
    ),
  }),
);
