import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startEmulator } from '../src/integrations/emulator/start.ts';
import { claudeTokenizer } from '../src/integrations/emulator/tokens/tokenizer.ts';
import type { SuiteOptions, SuiteResult } from './types.ts';

/*
 * Suite "tokenizer": what the emulator's token counting costs (docs/emulator.md, Token
 * counting). Loading the Claude BPE once, in a fresh process (it loads on first use); a request
 * whose 64k-token system prompt the emulator has never seen (counted); the same request again
 * (its blocks' counts are memoized by sha256, so it is hashed, not re-tokenized).
 */

const TOKENIZER = new URL('../src/integrations/emulator/tokens/tokenizer.ts', import.meta.url).href;
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const PROSE = readFileSync(new URL('../CONTRIBUTING.md', import.meta.url), 'utf8');

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** The first count in a fresh process: loading the vocabulary and building the WASM BPE. */
function loadMs(): number {
  const code = `const { claudeTokenizer } = await import(${JSON.stringify(TOKENIZER)});
const t = performance.now(); claudeTokenizer.count('x'); const load = performance.now() - t;
const u = performance.now(); claudeTokenizer.count('y'); console.log(JSON.stringify({ load, again: performance.now() - u }));`;
  const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  return (JSON.parse(out.trim().split('\n').at(-1)!) as { load: number }).load;
}

export async function tokenizerSuite(options: SuiteOptions): Promise<SuiteResult> {
  const reps = options.quick ? 1 : 5;
  const target = 64_000;
  const copies = Math.ceil(target / claudeTokenizer.count(PROSE));
  const emulator = await startEmulator({ latency: 'off', minCacheableTokens: 1 });
  const request = (system: string) =>
    fetch(`${emulator.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'sk-ant-bench', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({
        model: 'claude-opus-5-5',
        max_tokens: 1,
        system: [{ type: 'text', text: system, cache_control: { type: 'ephemeral' } }],
        messages: [{ role: 'user', content: 'hi' }],
      }),
    }).then(async (r) => {
      const body = (await r.json()) as { usage?: { input_tokens: number; cache_creation_input_tokens: number } };
      if (!r.ok || !body.usage) throw new Error(`emulator answered ${r.status}`);
      return body.usage.input_tokens + body.usage.cache_creation_input_tokens;
    });
  const timed = async (system: string): Promise<{ ms: number; tokens: number }> => {
    const start = performance.now();
    const tokens = await request(system);
    return { ms: performance.now() - start, tokens };
  };
  try {
    await timed('warm up the connection and the encoder');
    const load: number[] = [];
    const cold: number[] = [];
    const again: number[] = [];
    let tokens = 0;
    for (let r = 0; r < reps; r++) {
      load.push(loadMs());
      // a tag of its own: a block the emulator has never counted
      const system = `${r} ${Date.now()} ${PROSE.repeat(copies)}`;
      const first = await timed(system);
      tokens = first.tokens;
      cold.push(first.ms);
      again.push((await timed(system)).ms);
    }
    const rows = [
      { case: 'loading the tokenizer (first count, fresh process)', tokens: 1, median_ms: median(load) },
      { case: 'a request with a system prompt never seen (counted)', tokens, median_ms: median(cold) },
      { case: 'the same request again (memoized counts)', tokens, median_ms: median(again) },
    ].map((row) => ({ ...row, median_ms: Math.round(row.median_ms * 10) / 10, reps }));
    return {
      name: 'tokenizer',
      title: "The emulator's token counting: loading the Claude BPE, a cold request, the same request again",
      rows,
      conclusion: `loading ${rows[0]!.median_ms} ms once; a cold ${tokens.toLocaleString('en-US')}-token request ${rows[1]!.median_ms} ms; the same again ${rows[2]!.median_ms} ms (${(median(cold) / median(again)).toFixed(0)}× less)`,
    };
  } finally {
    await emulator.close();
  }
}
