import { once } from 'node:events';
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { startEmulator } from '../src/integrations/emulator/start.ts';
import { MAX_PIECE, SAMPLED_SLICES } from '../src/integrations/emulator/tokens/long-runs.ts';
import { claudeTokenizer } from '../src/integrations/emulator/tokens/tokenizer.ts';
import { startProxy } from '../src/integrations/proxy/server.ts';
import type { SuiteOptions, SuiteResult } from './types.ts';

/*
 * Suite "long-words" (issue 25): time per request against the length of one word in the
 * prompt, through the emulator (Messages), the proxy (the stall every other client of the
 * process sees while it estimates the prefix) and the emulator's Chat Completions mode with a
 * model id that long; beside them, the unsliced BPE on the same word (what it cost before).
 * Ratios within one run: ms per 1,000 characters should stay flat as the word grows.
 */

const require = createRequire(import.meta.url);
const bpe = (
  require('@anthropic-ai/tokenizer') as { getTokenizer(): { encode(t: string, s: 'all'): Uint32Array } }
).getTokenizer();

let seed = 1;
/** A new pseudo-random lowercase word each call (fresh text: no memo helps). */
function word(n: number): string {
  let out = '';
  for (let i = 0; i < n; i++) out += String.fromCharCode(97 + ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) % 26));
  return out;
}

const time = async (f: () => Promise<unknown>): Promise<number> => {
  const start = performance.now();
  await f();
  return performance.now() - start;
};

/** The longest the event loop was blocked while `f` ran, in ms. */
async function stall(f: () => Promise<unknown>): Promise<number> {
  const h = monitorEventLoopDelay({ resolution: 1 });
  h.enable();
  await f();
  h.disable();
  return h.max / 1e6;
}

const post = (url: string, headers: Record<string, string>, body: unknown) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  }).then((r) => r.text());

const PROSE = readFileSync(new URL('../CONTRIBUTING.md', import.meta.url), 'utf8');

const timeSync = (f: () => unknown): number => {
  const start = performance.now();
  f();
  return performance.now() - start;
};

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** A stand-in upstream for the proxy: a fixed answer, no work of its own (the stall measured is the proxy's). */
async function stubUpstream(): Promise<{ url: string; close(): Promise<void> }> {
  const body = JSON.stringify({
    id: 'msg_b',
    type: 'message',
    role: 'assistant',
    model: 'claude-opus-5-5',
    content: [{ type: 'text', text: 'ok' }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 100, output_tokens: 1 },
  });
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(body));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

export async function longWordsSuite(options: SuiteOptions): Promise<SuiteResult> {
  const lengths = options.quick ? [1_000, 60_000] : [1_000, 10_000, 60_000, 100_000];
  const reps = options.quick ? 1 : 3;
  const emulator = await startEmulator({ latency: 'off', minCacheableTokens: 1 });
  const chat = await startEmulator({ api: 'openai', latency: 'off' });
  const upstream = await stubUpstream();
  const proxy = await startProxy({ upstream: upstream.url });
  const anthropic = { 'x-api-key': 'sk-ant-bench', 'anthropic-version': '2023-06-01' };
  const messages = (w: string, tail: string) => ({
    model: 'claude-opus-5-5',
    max_tokens: 8,
    system: [{ type: 'text', text: `Context: ${w}`, cache_control: { type: 'ephemeral' } }],
    messages: [{ role: 'user', content: tail }],
  });
  const emulatorRequest = (n: number) => post(`${emulator.url}/v1/messages`, anthropic, messages(word(n), 'hi'));
  // Two requests on one prefix: the second is diagnosed against the first, which estimates the prefix's tokens.
  const proxyPair = async (n: number) => {
    const shared = word(n);
    await post(`${proxy.url}/v1/messages`, anthropic, messages(shared, 'first'));
    proxy.summary();
    return stall(async () => {
      await post(`${proxy.url}/v1/messages`, anthropic, messages(shared, 'second'));
      proxy.summary(); // works off the backlog: the estimate is done
    });
  };
  const chatRequest = (n: number) =>
    post(
      `${chat.url}/v1/chat/completions`,
      { authorization: 'Bearer k' },
      {
        model: word(n),
        messages: [{ role: 'user', content: 'hi' }],
      },
    );
  // Warm up: the encoder, the connections, the JIT.
  for (let i = 0; i < 3; i++) await Promise.all([emulatorRequest(100), proxyPair(100), chatRequest(100)]);
  const rows: Record<string, unknown>[] = [];
  try {
    for (const n of lengths) {
      const emulatorMs: number[] = [];
      const emulatorStall: number[] = [];
      const proxyStall: number[] = [];
      const chatMs: number[] = [];
      for (let r = 0; r < reps; r++) {
        let ms = 0;
        emulatorStall.push(await stall(async () => (ms = await time(() => emulatorRequest(n)))));
        emulatorMs.push(ms);
        proxyStall.push(await proxyPair(n));
        chatMs.push(await time(() => chatRequest(n)));
      }
      // The same count on ordinary prose of the same length: what linear costs on this machine now.
      const prose = PROSE.repeat(Math.ceil(n / PROSE.length)).slice(0, n);
      const proseMs = median(Array.from({ length: reps }, () => timeSync(() => claudeTokenizer.count(prose))));
      const wordMs = median(Array.from({ length: reps }, () => timeSync(() => claudeTokenizer.count(word(n)))));
      // The unsliced BPE grows with the square of the word: measured only where it ends in seconds.
      const rawMs = n <= 10_000 ? await time(async () => bpe.encode(word(n), 'all')) : null;
      rows.push({
        word_chars: n,
        emulator_ms: median(emulatorMs),
        emulator_stall_ms: median(emulatorStall),
        proxy_stall_ms: median(proxyStall),
        chat_model_id_ms: median(chatMs),
        count_word_ms: wordMs,
        count_prose_ms: proseMs,
        unsliced_bpe_ms: rawMs ?? 'n/a (minutes)',
      });
    }
  } finally {
    await proxy.close();
    await upstream.close();
    await emulator.close();
    await chat.close();
  }
  const ratio = (key: string) => (rows.at(-1)![key] as number) / (rows[0]![key] as number);
  const growth = (lengths.at(-1)! / lengths[0]!).toLocaleString('en-US');
  return {
    name: 'long-words',
    title: 'Token estimates against the length of one word (time per request, median of runs)',
    rows,
    conclusion: `A word ${growth}× longer: the emulator's request ×${ratio('emulator_ms').toFixed(1)}, the proxy's stall ×${ratio('proxy_stall_ms').toFixed(1)}, a Chat request with that long a model id ×${ratio('chat_model_id_ms').toFixed(1)}; counting the word costs ${((rows.at(-1)!['count_word_ms'] as number) / (rows.at(-1)!['count_prose_ms'] as number)).toFixed(1)}× counting prose of its length (runs of one character class reach the BPE in ${MAX_PIECE}-character slices, at most ${SAMPLED_SLICES} of them per run); the unsliced BPE grows with the square (10× the word, ×${rows.length > 1 && typeof rows[1]!['unsliced_bpe_ms'] === 'number' ? ((rows[1]!['unsliced_bpe_ms'] as number) / (rows[0]!['unsliced_bpe_ms'] as number)).toFixed(0) : '?'} the time).`,
  };
}
