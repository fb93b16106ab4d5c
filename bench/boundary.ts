import { fileURLToPath } from 'node:url';
import { Packr } from 'msgpackr';
import { Piscina } from 'piscina';
import { Bench } from 'tinybench';
import { captureSnapshot } from '../src/core/fork/snapshot.ts';
import { freeze } from '../src/core/prefix/freeze.ts';
import type { BoundaryTask } from './workers/boundary-worker.ts';
import type { SuiteOptions, SuiteResult } from './types.ts';

const packr = new Packr({ useRecords: false });

function pool(threads: number): Piscina {
  return new Piscina({
    filename: fileURLToPath(new URL('./workers/boundary-worker.ts', import.meta.url)),
    execArgv: ['--import', 'tsx'],
    minThreads: threads,
    maxThreads: threads,
    idleTimeout: 60_000,
  });
}

async function measure(
  options: SuiteOptions,
  tasks: Record<string, () => Promise<unknown>>,
): Promise<Record<string, number>> {
  const bench = new Bench({ time: options.quick ? 150 : 1000, warmupTime: options.quick ? 50 : 200 });
  for (const [name, fn] of Object.entries(tasks)) bench.add(name, fn);
  await bench.run();
  const out: Record<string, number> = {};
  for (const task of bench.tasks) {
    const result = task.result as { latency?: { mean: number } } | undefined;
    out[task.name] = result?.latency?.mean ?? Number.NaN;
  }
  return out;
}

const ratio = (a: number, b: number): number => Math.round((a / b) * 100) / 100;

/**
 * Suite 3, the boundary: a fork's result or event crossing from a worker to the main thread,
 * as a structured clone versus msgpackr-encoded and transferred, for a small event and a
 * 100 KB result.
 */
export async function boundarySuite(options: SuiteOptions): Promise<SuiteResult> {
  const p = pool(1);
  const rows: Record<string, unknown>[] = [];
  try {
    for (const bytes of [200, 100_000]) {
      const ms = await measure(options, {
        clone: () => p.run({ kind: 'produce', mode: 'clone', bytes } satisfies BoundaryTask),
        msgpackr: async () =>
          packr.unpack(
            (await p.run({ kind: 'produce', mode: 'msgpackr', bytes } satisfies BoundaryTask)) as Uint8Array,
          ),
      });
      rows.push({
        payload_bytes: bytes,
        clone_ms: ms['clone'],
        msgpackr_ms: ms['msgpackr'],
        msgpackr_vs_clone: ratio(ms['msgpackr']!, ms['clone']!),
      });
    }
  } finally {
    await p.destroy();
  }
  const big = rows.at(-1)!;
  const conclusion =
    Number(big['msgpackr_vs_clone']) > 1
      ? 'Structured clone is the faster path here: fork results and events cross as plain objects (msgpackr is not used on the boundary).'
      : 'msgpackr + transfer beat structured clone for large results in this run: revisit the boundary encoding.';
  return {
    name: 'boundary',
    title: 'Result crossing the worker boundary (round trip per message, ms)',
    rows,
    conclusion,
  };
}

/**
 * Suite 1, dispatch: handing a frozen prefix to workers per task: the shared SAB (by
 * reference, hash verified once per thread) versus a structured-cloned string versus a
 * msgpackr-encoded copy.
 */
export async function dispatchSuite(options: SuiteOptions): Promise<SuiteResult> {
  const p = pool(2);
  const rows: Record<string, unknown>[] = [];
  try {
    for (const size of [64 * 1024, 1024 * 1024, 8 * 1024 * 1024]) {
      const prefix = freeze(captureSnapshot({ model: 'claude-opus-5-5', system: 'x'.repeat(size), messages: [] }));
      const text = new TextDecoder().decode(prefix.head);
      const ms = await measure(options, {
        sab: () => p.run({ kind: 'dispatch-sab', prefix: prefix.sab } satisfies BoundaryTask),
        string: () => p.run({ kind: 'dispatch-string', prefix: text } satisfies BoundaryTask),
        msgpackr: () => {
          const packed = packr.pack({ head: prefix.head.slice() });
          return p.run({ kind: 'dispatch-msgpackr', prefix: packed } satisfies BoundaryTask);
        },
      });
      rows.push({
        prefix_bytes: prefix.byteLength,
        sab_ms: ms['sab'],
        string_ms: ms['string'],
        msgpackr_ms: ms['msgpackr'],
        string_vs_sab: ratio(ms['string']!, ms['sab']!),
        msgpackr_vs_sab: ratio(ms['msgpackr']!, ms['sab']!),
      });
    }
  } finally {
    await p.destroy();
  }
  return {
    name: 'dispatch',
    title: 'Handing the frozen prefix to a worker (round trip per task, ms)',
    rows,
    conclusion:
      'The SharedArrayBuffer costs the same at any size (it travels by reference; the hash is checked once per thread); a cloned string or a msgpackr copy grows with the prefix.',
  };
}
