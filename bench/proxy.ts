import Anthropic from '@anthropic-ai/sdk';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startEmulator, type Emulator } from '../src/integrations/emulator/start.ts';
import { claudeTokenizer } from '../src/integrations/emulator/tokens/tokenizer.ts';
import { startProxy } from '../src/integrations/proxy/server.ts';
import type { SuiteOptions, SuiteResult } from './types.ts';

const MODEL = 'claude-opus-5-5';
const FORKS = 8;
const PREFIX_TOKENS = 20_000;
const cc = { type: 'ephemeral' } as const;

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

/** A new prefix of about `tokens` tokens (the nonce makes every arm start cold). */
function prefixText(tokens: number, nonce: string): string {
  const line = (i: number): string =>
    `Line ${i} of the shared context ${nonce}: the build uses esbuild, tests run with vitest, and every module exports one thing.\n`;
  const perLine = claudeTokenizer.count(line(1000));
  const lines = Array.from({ length: Math.ceil(tokens / perLine) }, (_, i) => line(i));
  return lines.join('');
}

function forkParams(prefix: string, i: number): Anthropic.MessageCreateParamsStreaming {
  return {
    model: MODEL,
    max_tokens: 16,
    stream: true,
    system: [{ type: 'text', text: 'You are a fork of the parent agent. Do your directive and report.' }],
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: prefix, cache_control: cc },
          { type: 'text', text: `Directive: survey part ${i + 1} of ${FORKS} and report.`, cache_control: cc },
        ],
      },
    ],
  };
}

async function drain(stream: AsyncIterable<unknown>): Promise<void> {
  for await (const _event of stream) {
    // Read to the end: the request is over when its stream is.
  }
}

interface FanArm {
  makespanMs: number;
  efficiency: number;
  hitRatio: number;
  maxHitRatio: number;
  costUsd: number;
  held: number;
}

/** 8 streaming SDK requests at once, through a fresh proxy, on a prefix nobody has written. */
async function coldFanOut(emulator: Emulator, warmFirst: boolean, nonce: string): Promise<FanArm> {
  const proxy = await startProxy({ upstream: emulator.url, warmFirst });
  try {
    const client = new Anthropic({ apiKey: 'bench', baseURL: proxy.url, maxRetries: 0 });
    const prefix = prefixText(PREFIX_TOKENS, nonce);
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: FORKS }, async (_, i) => drain(await client.messages.create(forkParams(prefix, i)))),
    );
    const makespanMs = performance.now() - t0;
    const summary = proxy.summary();
    const fanout = summary.fanouts[0];
    if (!fanout || fanout.requests !== FORKS)
      throw new Error(
        `proxy bench: expected one fan-out of ${FORKS}, got ${JSON.stringify(summary.fanouts.map((f) => f.requests))}`,
      );
    return {
      makespanMs,
      efficiency: fanout.cache_efficiency,
      hitRatio: fanout.hit_ratio,
      maxHitRatio: fanout.max_hit_ratio,
      costUsd: fanout.cost_usd ?? Number.NaN,
      held: summary.requests.held,
    };
  } finally {
    await proxy.close();
  }
}

/** Per-request wall time of small streaming requests, sent one after another. */
async function perRequestMs(client: Anthropic, count: number, tag: string): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const t0 = performance.now();
    await drain(
      await client.messages.create({
        model: MODEL,
        max_tokens: 32,
        stream: true,
        system: [{ type: 'text', text: 'You answer briefly. '.repeat(50), cache_control: cc }],
        messages: [{ role: 'user', content: `question ${tag} ${i}` }],
      }),
    );
    times.push(performance.now() - t0);
  }
  return times;
}

/**
 * Suite 6, the proxy and warm-first: a cold simultaneous fan-out of 8 streaming SDK requests
 * sharing a new 20K-token prefix, through the proxy without and with `--warm-first`, side by
 * side in one run on the emulator's realistic latency (cache efficiency and makespan).
 */
export async function proxyFanoutSuite(options: SuiteOptions): Promise<SuiteResult> {
  const reps = options.quick ? 1 : 3;
  const rows: Record<string, unknown>[] = [];
  const realistic = await startEmulator({ latency: 'realistic', seed: 18 });
  const arms: Record<'off' | 'on', FanArm[]> = { off: [], on: [] };
  try {
    for (let rep = 0; rep < reps; rep++) {
      // Alternate which arm goes first, so neither always inherits the other's warm JIT.
      const order: ('off' | 'on')[] = rep % 2 === 0 ? ['off', 'on'] : ['on', 'off'];
      for (const arm of order) arms[arm].push(await coldFanOut(realistic, arm === 'on', `rep${rep}-${arm}`));
    }
  } finally {
    await realistic.close();
  }
  const offMs = median(arms.off.map((a) => a.makespanMs));
  for (const arm of ['off', 'on'] as const) {
    const runs = arms[arm];
    const ms = median(runs.map((a) => a.makespanMs));
    rows.push({
      arm: `--warm-first ${arm}`,
      forks: FORKS,
      cache_efficiency: Math.round(median(runs.map((a) => a.efficiency)) * 1000) / 1000,
      hit_ratio_pct: Math.round(1000 * median(runs.map((a) => a.hitRatio))) / 10,
      max_hit_ratio_pct: Math.round(1000 * median(runs.map((a) => a.maxHitRatio))) / 10,
      makespan_s: Math.round(ms) / 1000,
      makespan_vs_off: Math.round((ms / offMs) * 100) / 100,
      cost_usd: Math.round(median(runs.map((a) => a.costUsd)) * 10_000) / 10_000,
      held: median(runs.map((a) => a.held)),
      runs_s: runs.map((a) => (a.makespanMs / 1000).toFixed(2)).join(' / '),
    });
  }
  const [offRow, onRow] = rows;
  const conclusion =
    `A cold simultaneous fan-out of ${FORKS} streaming requests on a new ${PREFIX_TOKENS.toLocaleString('en-US')}-token prefix reached cache efficiency ${String(offRow!['cache_efficiency'])} through the proxy as is and ${String(onRow!['cache_efficiency'])} with --warm-first, ` +
    `in ${String(onRow!['makespan_vs_off'])}× the makespan (median of ${reps} paired runs, emulator latency realistic) and ${String(onRow!['cost_usd'])} against ${String(offRow!['cost_usd'])} USD.`;
  return {
    name: 'proxy-fanout',
    title: `forkcache proxy: a cold fan-out of ${FORKS} on a new ${PREFIX_TOKENS.toLocaleString('en-US')}-token prefix, --warm-first off and on`,
    rows,
    conclusion,
  };
}

/** Start a `forkcache` command (or a bench script) in its own process; resolves with its URL. */
async function spawnCommand(
  args: string[],
  script = 'src/cli/main.ts',
): Promise<{ url: string; pid: number | undefined; stop: () => Promise<void> }> {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /listening on (\S+)/.exec(out);
      if (match) resolve(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`forkcache ${args[0]} exited with ${code} before listening`)));
  });
  return {
    url,
    pid: child.pid,
    stop: async () => {
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** CPU seconds a process has used (all its threads), where the OS shows it (Linux); else undefined. */
function cpuSeconds(pid: number | undefined): number | undefined {
  try {
    // Fields after the command name (which may hold spaces): utime and stime are the 12th and
    // 13th, in clock ticks (USER_HZ, 100 on Linux).
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}

/**
 * Suite 7, the hop: what streaming through the proxy adds per request at latency off. The
 * emulator and the proxy run as the commands a user starts (`forkcache emulator`, `forkcache
 * proxy`), each in its own process, the SDK client in this one: the deployment being measured.
 */
export async function proxyOverheadSuite(options: SuiteOptions): Promise<SuiteResult> {
  const count = options.quick ? 300 : 1000;
  const started: { stop: () => Promise<void> }[] = [];
  const times: Record<'direct' | 'pipe' | 'proxy', number[]> = { direct: [], pipe: [], proxy: [] };
  const cpuMs: Record<'pipe' | 'proxy', number | undefined> = { pipe: undefined, proxy: undefined };
  try {
    const emulator = await spawnCommand(['emulator', '--latency', 'off', '--seed', '19']);
    started.push(emulator);
    const proxy = await spawnCommand(['proxy', '--upstream', emulator.url, '--json']);
    started.push(proxy);
    const pipe = await spawnCommand([emulator.url], 'bench/support/pipe-proxy.ts');
    started.push(pipe);
    const clients = {
      direct: new Anthropic({ apiKey: 'bench', baseURL: emulator.url, maxRetries: 0 }),
      pipe: new Anthropic({ apiKey: 'bench', baseURL: pipe.url, maxRetries: 0 }),
      proxy: new Anthropic({ apiKey: 'bench', baseURL: proxy.url, maxRetries: 0 }),
    };
    for (const client of Object.values(clients)) await perRequestMs(client, 100, 'warm-up');
    const cpuBefore = { pipe: cpuSeconds(pipe.pid), proxy: cpuSeconds(proxy.pid) };
    // Rounds of one request per arm, rotating which goes first: the machine's drift (other
    // processes on 2 cores) moves the requests of a round alike, so a round's differences are
    // what each hop costs. What a hop does once an answer is out still takes CPU from the
    // requests after it: its CPU per request is reported beside its latency.
    const arms = ['direct', 'pipe', 'proxy'] as const;
    for (let i = 0; i < count; i++) {
      for (let k = 0; k < arms.length; k++) {
        const arm = arms[(i + k) % arms.length]!;
        times[arm].push((await perRequestMs(clients[arm], 1, `${arm}${i}`))[0]!);
      }
    }
    for (const arm of ['pipe', 'proxy'] as const) {
      const [before, after] = [cpuBefore[arm], cpuSeconds(arm === 'pipe' ? pipe.pid : proxy.pid)];
      if (before !== undefined && after !== undefined) cpuMs[arm] = ((after - before) * 1000) / count;
    }
  } finally {
    for (const s of started.reverse()) await s.stop();
  }
  const added = (arm: 'pipe' | 'proxy'): number => median(times[arm].map((t, i) => t - times.direct[i]!));
  const round = (x: number): number => Math.round(x * 1000) / 1000;
  const p90 = (xs: number[]): number => round([...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.9)]!);
  const cpu = (ms: number | undefined): number | string => (ms === undefined ? 'n/a' : Math.round(ms * 100) / 100);
  const row = (arm: string, xs: number[], addedMs: number, hopCpu: number | string) => ({
    arm,
    requests: count,
    median_ms: round(median(xs)),
    p90_ms: p90(xs),
    added_ms_median_of_rounds: round(addedMs),
    hop_cpu_ms_per_request: hopCpu,
  });
  const rows = [
    row('SDK → emulator', times.direct, 0, '-'),
    row('SDK → bare Node pipe proxy → emulator', times.pipe, added('pipe'), cpu(cpuMs.pipe)),
    row('SDK → forkcache proxy → emulator', times.proxy, added('proxy'), cpu(cpuMs.proxy)),
  ];
  const cpuNote =
    cpuMs.proxy === undefined
      ? ''
      : `; the hop's own CPU per request (all its threads) ${cpu(cpuMs.proxy)} ms for the proxy, ${cpu(cpuMs.pipe)} ms for the pipe`;
  const conclusion =
    `Streaming through \`forkcache proxy\` (ledger, diagnosis and grouping on; warm-first off) added ${added('proxy').toFixed(3)} ms per request, against ${added('pipe').toFixed(3)} ms for a bare Node pipe proxy ` +
    `(medians of ${count} rounds; direct ${round(median(times.direct))} ms) at emulator latency off${cpuNote}; client, proxies and emulator each in its own process on one machine.`;
  return {
    name: 'proxy-overhead',
    title: 'forkcache proxy: time added per streaming request (emulator latency off)',
    rows,
    conclusion,
  };
}
