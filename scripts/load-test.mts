// Load: N forks × 3 turns on the emulator (latency `fast` by default), through the real engine.
// Prints one JSON line: all completed?, forks/s, peak RSS, queue never rejected. Run it as
// `npx tsx scripts/load-test.mts [--forks 1000] [--latency fast]`; `scripts/load-test.sh` also
// checks that the process exits on its own (no leaked handles).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmulator } from '../src/integrations/emulator/start.ts';
import { ForkEngine } from '../src/index.ts';
import { captureSnapshot } from '../src/core/fork/snapshot.ts';
import { TOOL_DECLARATIONS } from '../src/core/tools/declarations.ts';
import { threeTurns } from './three-turns.ts';

const arg = (name: string, fallback: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? (process.argv[i + 1] ?? fallback) : fallback;
};
const forks = Number(arg('forks', '1000'));
const latency = arg('latency', 'fast') as 'off' | 'fast' | 'realistic';

const ws = mkdtempSync(join(tmpdir(), 'fc-load-'));
writeFileSync(join(ws, 'a.ts'), 'export const a = 1;\n');
const emulator = await startEmulator({ latency, scripts: [threeTurns], script: 'three-turns' });
const engine = await ForkEngine.create({
  baseURL: emulator.url,
  apiKey: 'load',
  workspace: ws,
  runsDir: join(ws, 'runs'),
  pool: { maxThreads: 2, concurrentTasksPerWorker: 32 },
  concurrency: 32,
});
const snapshot = captureSnapshot({
  model: 'claude-opus-5-5',
  system: 'You are a careful engineer. '.repeat(300),
  tools: TOOL_DECLARATIONS,
  messages: [{ role: 'user', content: 'Survey the workspace, one fork per task.' }],
});
const started = performance.now();
let peakRss = process.memoryUsage().rss;
const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 50);
const fan = engine.fanOut(
  snapshot,
  Array.from({ length: forks }, (_, i) => `list the workspace, task ${i + 1}`),
);
const { forks: results, summary } = await fan.settled();
const seconds = (performance.now() - started) / 1000;
clearInterval(sampler);
await engine.close();
await emulator.close();
const completed = results.filter((f) => f.status === 'completed').length;
const turns = results.reduce((n, f) => n + f.turns, 0);
process.stdout.write(
  `${JSON.stringify({
    forks,
    latency,
    completed,
    turns,
    seconds: Number(seconds.toFixed(2)),
    forks_per_second: Number((forks / seconds).toFixed(1)),
    peak_rss_mb: Math.round(Math.max(peakRss, process.resourceUsage().maxRSS * 1024) / 2 ** 20),
    cache_efficiency: summary.cache.cache_efficiency,
    emulator_errors: emulator.stats().requests.errors,
  })}\n`,
);
if (completed !== forks) process.exitCode = 1;
