// What a fork worker thread costs to start, as the suite builds it (test/setup/built-sources.ts):
// the worker bundled into one file against the same sources built one file per module. Each
// arm starts --threads threads one after another, alternating the two, each thread importing
// its worker and saying so; the CPU is this process's (every thread's) over the arm, per thread.
// Ratios, not times: run both in one run.
// Run: npx tsx bench/suite/worker-start.ts [--threads 8]
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { builtSources } from '../../test/setup/built-sources.ts';

const at = process.argv.indexOf('--threads');
const threads = at < 0 ? 8 : Number(process.argv[at + 1]);

/** One thread that imports `file` and posts once it is loaded; CPU and wall milliseconds. */
async function start(file: string): Promise<{ cpuMs: number; wallMs: number }> {
  const cpu = process.cpuUsage();
  const t0 = performance.now();
  const source = `import(${JSON.stringify(file)}).then(() => require('node:worker_threads').parentPort.postMessage(1))`;
  await new Promise<void>((resolve, reject) => {
    const worker = new Worker(source, { eval: true });
    worker.once('message', () => void worker.terminate().then(() => resolve()));
    worker.once('error', reject);
  });
  const used = process.cpuUsage(cpu);
  return { cpuMs: (used.user + used.system) / 1000, wallMs: performance.now() - t0 };
}

const built = await builtSources();
const arms = {
  bundle: join(built, 'workers', 'fork-worker.js'),
  modules: join(built, 'workers', 'fork-worker.modules.js'),
};
const sums = { bundle: { cpuMs: 0, wallMs: 0 }, modules: { cpuMs: 0, wallMs: 0 } };
await start(arms.modules); // the disk cache warmed for both, not counted
await start(arms.bundle);
for (let i = 0; i < threads; i++) {
  for (const arm of ['modules', 'bundle'] as const) {
    const r = await start(arms[arm]);
    sums[arm].cpuMs += r.cpuMs;
    sums[arm].wallMs += r.wallMs;
  }
}
const per = (n: number): number => Math.round(n / threads);
console.log(
  JSON.stringify({
    threads,
    modules: { cpuMs: per(sums.modules.cpuMs), wallMs: per(sums.modules.wallMs) },
    bundle: { cpuMs: per(sums.bundle.cpuMs), wallMs: per(sums.bundle.wallMs) },
    cpuRatio: Math.round((sums.modules.cpuMs / sums.bundle.cpuMs) * 100) / 100,
    wallRatio: Math.round((sums.modules.wallMs / sums.bundle.wallMs) * 100) / 100,
  }),
);
