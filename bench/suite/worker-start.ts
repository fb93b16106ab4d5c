// What a fork worker thread costs to start, as the suite builds it (test/setup/built-sources.ts):
// the worker bundled into one file against the same sources built one file per module. Each
// arm starts --threads threads one after another, alternating the two, each thread importing
// its worker and saying so; the CPU is this process's (every thread's) over the arm, per thread.
// Ratios, not times: run both in one run.
// Run: npx tsx bench/suite/worker-start.ts [--threads 8]
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { builtSources } from '../../test/setup/built-sources.ts';
import { alternate, type Sample } from './alternate.ts';

const at = process.argv.indexOf('--threads');
const threads = at < 0 ? 8 : Number(process.argv[at + 1]);

/** One thread that imports `file` and posts once it is loaded; CPU and wall milliseconds. */
async function start(file: string): Promise<Sample> {
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
console.log(JSON.stringify({ threads, ...(await alternate(threads, arms, ['modules', 'bundle'], start)) }));
