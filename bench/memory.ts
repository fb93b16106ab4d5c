import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Piscina } from 'piscina';
import { captureSnapshot } from '../src/core/fork/snapshot.ts';
import { freeze, type FrozenPrefix } from '../src/core/prefix/freeze.ts';
import { BENCH_MODEL, sourceFile } from './support/parent.ts';
import type { HoldResult, HoldTask } from './workers/memory-worker.ts';
import type { SuiteOptions, SuiteResult } from './types.ts';

const MiB = 2 ** 20;
const PREFIX_BYTES = 8 * MiB;
/** The copy baseline stops here: 64 copies are already 0.5 GiB; 256 would be 2 GiB. */
const COPY_MAX_FORKS = 64;

type Arm = 'shared SAB' | 'cloned string';

/**
 * Collect garbage on the main thread and give the sweeper a moment to return pages, so that
 * RSS baselines do not include the previous step's garbage. (`--expose-gc` set at run time:
 * a new context then exposes `gc`.)
 */
function mainGc(): () => Promise<void> {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  return async () => {
    for (let i = 0; i < 2; i++) {
      gc();
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  };
}

/** An ~8 MiB frozen prefix: generated sources in the system prompt, as a long parent's would be. */
function bigPrefix(): FrozenPrefix {
  const files: string[] = [];
  let bytes = 0;
  for (let i = 0; bytes < PREFIX_BYTES - 64 * 1024; i++) {
    const text = sourceFile(6, i, 400);
    files.push(text);
    bytes += text.length + 1;
  }
  return freeze(captureSnapshot({ model: BENCH_MODEL, system: files.join('\n'), messages: [] }));
}

interface Sample {
  rssGrowth: number;
  rss: number;
  main: NodeJS.MemoryUsage;
  workers: HoldResult[];
}

/**
 * N tasks live at once on a fresh 2-thread pool: warm both threads first (module loading, the
 * one hash check per thread), collect garbage, then measure peak RSS while all N hold.
 */
async function measure(
  prefix: FrozenPrefix,
  text: string,
  arm: Arm,
  forks: number,
  gc: () => Promise<void>,
): Promise<Sample> {
  const pool = new Piscina({
    filename: fileURLToPath(new URL('./workers/memory-worker.ts', import.meta.url)),
    execArgv: ['--import', 'tsx'],
    minThreads: 2,
    maxThreads: 2,
    concurrentTasksPerWorker: Math.max(8, forks),
    idleTimeout: 60_000,
  });
  const hold = async (
    n: number,
    payload: SharedArrayBuffer | string,
  ): Promise<{ peak: NodeJS.MemoryUsage; results: HoldResult[] }> => {
    const control = new Int32Array(new SharedArrayBuffer(8));
    const tasks = Array.from(
      { length: n },
      () => pool.run({ prefix: payload, control } satisfies HoldTask) as Promise<HoldResult>,
    );
    while (Atomics.load(control, 0) < n) await new Promise((resolve) => setImmediate(resolve));
    const peak = process.memoryUsage();
    Atomics.store(control, 1, 1);
    Atomics.notify(control, 1);
    return { peak, results: await Promise.all(tasks) };
  };
  try {
    await hold(8, prefix.sab);
    await gc();
    const before = process.memoryUsage().rss;
    const { peak, results } = await hold(forks, arm === 'shared SAB' ? prefix.sab : text);
    const byThread = new Map<number, HoldResult>();
    for (const r of results) if ((byThread.get(r.threadId)?.heapUsed ?? -1) < r.heapUsed) byThread.set(r.threadId, r);
    return { rssGrowth: peak.rss - before, rss: peak.rss, main: peak, workers: [...byThread.values()] };
  } finally {
    await pool.destroy();
    await gc();
  }
}

const mib = (bytes: number): number => Math.round((bytes / MiB) * 10) / 10;

/**
 * Suite 2, memory: resident memory while N forks are live over an ~8 MiB frozen prefix, with
 * the prefix handed over as the engine does (one SharedArrayBuffer, by reference) and, as a
 * baseline, as a structured-cloned string per task. Measured on the Piscina pool directly
 * with the engine's task shape: through the full engine every request in flight also copies
 * the head into its HTTP body (Node's fetch refuses SAB views) and the in-process emulator
 * parses each body, which would bury the question — is the prefix held once? — under costs
 * bounded by API concurrency, not by N.
 */
export async function memorySuite(options: SuiteOptions): Promise<SuiteResult> {
  const gc = mainGc();
  const prefix = bigPrefix();
  const text = new TextDecoder().decode(prefix.head);
  await measure(prefix, text, 'shared SAB', 1, gc); // a first pool pays one-off loading costs
  const sizes = options.quick ? [1, 16, 64] : [1, 16, 64, 256];
  const rows: Record<string, unknown>[] = [];
  for (const arm of ['shared SAB', 'cloned string'] as const) {
    for (const forks of sizes) {
      if (arm === 'cloned string' && forks > COPY_MAX_FORKS) continue;
      const s = await measure(prefix, text, arm, forks, gc);
      const sum = (pick: (r: HoldResult) => number): number => s.workers.reduce((acc, r) => acc + pick(r), 0);
      rows.push({
        arm,
        forks,
        rss_mib: mib(s.rss),
        rss_growth_mib: mib(s.rssGrowth),
        growth_per_fork_kib: Math.round(s.rssGrowth / forks / 1024),
        per_fork_pct_of_prefix: Math.round((s.rssGrowth / forks / prefix.byteLength) * 10_000) / 100,
        main_heap_mib: mib(s.main.heapUsed),
        main_external_mib: mib(s.main.external),
        main_array_buffers_mib: mib(s.main.arrayBuffers),
        workers_heap_mib: mib(sum((r) => r.heapUsed)),
        workers_array_buffers_mib: mib(sum((r) => r.arrayBuffers)),
      });
    }
  }
  const at = (arm: Arm, forks: number): Record<string, unknown> | undefined =>
    rows.find((r) => r['arm'] === arm && r['forks'] === forks);
  const sabTop = at('shared SAB', sizes.at(-1)!)!;
  const copyTop = at('cloned string', Math.min(COPY_MAX_FORKS, sizes.at(-1)!))!;
  const conclusion =
    `With the shared SharedArrayBuffer, peak RSS grew ${String(sabTop['rss_growth_mib'])} MiB for ${String(sabTop['forks'])} live forks ` +
    `(${String(sabTop['growth_per_fork_kib'])} KiB per fork, ${String(sabTop['per_fork_pct_of_prefix'])}% of the ${mib(prefix.byteLength)} MiB prefix), ` +
    `against ${String(copyTop['rss_growth_mib'])} MiB for ${String(copyTop['forks'])} forks with a cloned copy per task (${String(copyTop['per_fork_pct_of_prefix'])}% of the prefix per fork): ` +
    "the prefix is held once (measured on the Piscina pool with the engine's task shape, so that per-request HTTP bodies — bounded by API concurrency, not by N — and the in-process emulator do not mask it).";
  return {
    name: 'memory',
    title: `Memory while N forks are live over an ${mib(prefix.byteLength)} MiB frozen prefix (process RSS; heaps per isolate)`,
    rows,
    conclusion,
  };
}
