// The distributed backend against the single-machine engine, same workload, one run:
// N forks × 3 turns on the emulator (latency off), 2 hosts × 1 thread vs 1 process × 2 threads.
// `npx tsx scripts/distributed-bench.mts [--forks 200]` (needs redis-server on PATH).
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmulator } from '../src/integrations/emulator/start.ts';
import { ForkEngine, type ForkEngineOptions } from '../src/index.ts';
import { captureSnapshot } from '../src/core/fork/snapshot.ts';
import { TOOL_DECLARATIONS } from '../src/core/tools/declarations.ts';
import { threeTurns } from './three-turns.ts';

const forks = Number(process.argv[process.argv.indexOf('--forks') + 1] || 200);
const children: ChildProcess[] = [];

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function startUntil(command: string, args: string[], ready: RegExp): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      stdio: ['ignore', 'pipe', 'inherit'],
      // the hosts serve the emulator with their own endpoint, and share the job secret
      env: { ...process.env, ANTHROPIC_API_KEY: '', ANTHROPIC_BASE_URL: emulator.url, FORKCACHE_JOB_SECRET: secret },
    });
    children.push(child);
    let out = '';
    child.stdout!.on('data', (d: Buffer) => ((out += d), ready.test(out) && resolve()));
    child.on('exit', (code) => reject(new Error(`${command} exited (${code})`)));
  });
}

const secret = randomBytes(32).toString('hex');
const emulator = await startEmulator({ latency: 'off', scripts: [threeTurns], script: 'three-turns' });
const ws = mkdtempSync(join(tmpdir(), 'fc-dist-bench-'));
writeFileSync(join(ws, 'a.ts'), 'export const a = 1;\n');
const snapshot = captureSnapshot({
  model: 'claude-opus-5-5',
  system: 'You are a careful engineer. '.repeat(300),
  tools: TOOL_DECLARATIONS,
  messages: [{ role: 'user', content: 'Survey the workspace.' }],
});
const directives = Array.from({ length: forks }, (_, i) => `list the workspace, task ${i + 1}`);

async function measure(extra: Partial<ForkEngineOptions>): Promise<{ seconds: number; completed: number }> {
  const engine = await ForkEngine.create({
    baseURL: emulator.url,
    apiKey: 'bench',
    workspace: ws,
    runsDir: mkdtempSync(join(tmpdir(), 'fc-dist-runs-')),
    concurrency: 32,
    ...extra,
  });
  const started = performance.now();
  const { forks: results } = await engine.fanOut(snapshot, directives).settled();
  const seconds = (performance.now() - started) / 1000;
  await engine.close();
  return { seconds, completed: results.filter((f) => f.status === 'completed').length };
}

try {
  const port = await freePort();
  await startUntil(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    /Ready to accept connections/,
  );
  const redis = `redis://127.0.0.1:${port}`;
  for (let i = 0; i < 2; i++)
    await startUntil(
      process.execPath,
      ['--import', 'tsx', 'src/cli/main.ts', 'worker', '--redis', redis, '--threads', '1', '--concurrency', '16'],
      /serving/,
    );
  const local = await measure({ pool: { maxThreads: 2, concurrentTasksPerWorker: 16 } });
  const distributed = await measure({ distributed: { redis, secret } });
  const row = (name: string, r: { seconds: number; completed: number }) => ({
    backend: name,
    forks,
    completed: r.completed,
    seconds: Number(r.seconds.toFixed(2)),
    forks_per_s: Number((forks / r.seconds).toFixed(1)),
    ms_per_fork: Number(((r.seconds * 1000) / forks).toFixed(2)),
  });
  const rows = [
    row('single machine (1 process, 2 threads)', local),
    row('distributed (2 hosts x 1 thread, BullMQ)', distributed),
  ];
  process.stdout.write(
    `${JSON.stringify({ rows, overhead_ms_per_fork: Number((((distributed.seconds - local.seconds) * 1000) / forks).toFixed(2)), ratio: Number((distributed.seconds / local.seconds).toFixed(2)) }, null, 2)}\n`,
  );
} finally {
  // the hosts first (they finish and disconnect), then their Redis
  const [redisServer, ...hostProcesses] = children;
  await Promise.all(
    hostProcesses.map((child) => new Promise((resolve) => (child.once('exit', resolve), child.kill('SIGTERM')))),
  );
  redisServer?.kill('SIGTERM');
  await emulator.close();
}
