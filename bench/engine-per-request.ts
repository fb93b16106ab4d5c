// An app that makes an engine per request (the MCP server's fork tool does: one engine per
// call): each request creates an engine, runs a fan-out of two forks on the emulator, and
// closes it. Two arms, alternated in one run: `reused` as forkcache does it (a closed
// engine's threads serve the next engine, src/core/pool/thread-pool.ts) and `fresh`, every
// parked pool closed before each request (each engine starts its threads, as before).
// CPU is this process's, every thread's, per request. Ratios, not times: both arms in one run
// (bench/suite/alternate.ts).
// From sources each thread loads the tsx loader too; with FORKCACHE_BUILT_SOURCES naming the
// suite's build (node_modules/.cache/forkcache-test-build/<hash>) it loads the one-file worker.
// Run: npx tsx bench/engine-per-request.ts [--times 10]
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ForkEngine } from '../src/index.ts';
import { startEmulator } from '../src/integrations/emulator/start.ts';
import { captureSnapshot } from '../src/core/fork/snapshot.ts';
import { TOOL_DECLARATIONS } from '../src/core/tools/declarations.ts';
import { closeParkedPools } from '../src/core/pool/thread-pool.ts';
import { alternate, type Sample } from './suite/alternate.ts';

const at = process.argv.indexOf('--times');
const times = at < 0 ? 10 : Number(process.argv[at + 1]);
if (!Number.isInteger(times) || times < 1)
  throw new Error(`--times: expected a whole number ≥ 1, got ${process.argv[at + 1]}`);

const emulator = await startEmulator({ latency: 'off' });
const workspace = mkdtempSync(join(tmpdir(), 'fc-bench-per-request-'));
writeFileSync(join(workspace, 'a.ts'), 'export const a = 1;\n');
writeFileSync(join(workspace, 'b.ts'), 'export const b = 2;\n');
let sequence = 0;

/** One request: an engine, a fan-out of two forks, the engine closed; its CPU and wall milliseconds. */
async function request(fresh: boolean): Promise<Sample> {
  if (fresh) await closeParkedPools();
  const cpu = process.cpuUsage();
  const t0 = performance.now();
  const engine = await ForkEngine.create({ baseURL: emulator.url, apiKey: 'bench', workspace });
  try {
    const snapshot = captureSnapshot({
      model: 'claude-sonnet-4-6',
      system: `request ${++sequence}: ${'You are a careful engineer. '.repeat(400)}`,
      tools: TOOL_DECLARATIONS,
      messages: [{ role: 'user', content: 'Read the two files and report.' }],
    });
    const { forks } = await engine.fanOut(snapshot, ['read a.ts and report', 'read b.ts and report']).settled();
    const bad = forks.find((fork) => fork.status !== 'completed');
    if (bad) throw new Error(`fork ${bad.forkId} ended ${bad.status}: ${bad.error?.message ?? ''}`);
  } finally {
    await engine.close();
  }
  const used = process.cpuUsage(cpu);
  return { cpuMs: (used.user + used.system) / 1000, wallMs: performance.now() - t0 };
}

try {
  const arms = { fresh: true, reused: false };
  console.log(JSON.stringify({ times, ...(await alternate(times, arms, ['fresh', 'reused'], request)) }));
} finally {
  await closeParkedPools();
  await emulator.close();
  rmSync(workspace, { recursive: true, force: true });
}
