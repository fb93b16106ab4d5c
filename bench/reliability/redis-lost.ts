// Issue 25: how long a run on the distributed backend takes to end once redis-server is
// killed, with the default bound (30 s) or another one. A host serves the emulator; one fork
// sits in a long `bash` call; Redis is killed; the run must end with REDIS_LOST.
// Run: npx tsx bench/reliability/redis-lost.ts [--timeout-ms 30000]   (needs redis-server)
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ForkEngine } from '../../src/index.ts';
import { startEmulator } from '../../src/integrations/emulator/start.ts';
import { captureSnapshot } from '../../src/core/fork/snapshot.ts';
import { TOOL_DECLARATIONS } from '../../src/core/tools/declarations.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const flag = process.argv.indexOf('--timeout-ms');
const timeoutMs = flag > 0 ? Number(process.argv[flag + 1]) : undefined;
const secret = randomBytes(32).toString('hex');
const port = await new Promise<number>((resolve) => {
  const server = createServer().listen(0, '127.0.0.1', () => {
    const { port: p } = server.address() as { port: number };
    server.close(() => resolve(p));
  });
});

/** Start a process; resolve once its stdout matches. */
function start(command: string, args: string[], ready: RegExp, env: NodeJS.ProcessEnv = process.env) {
  const child = spawn(command, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'ignore'], env });
  return new Promise<typeof child>((resolve) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => ((out += d), ready.test(out) && resolve(child)));
  });
}

const emulator = await startEmulator({ latency: 'off', script: 'refactor' });
const redis = await start(
  'redis-server',
  ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
  /Ready to accept/,
);
const url = `redis://127.0.0.1:${port}`;
const host = await start(
  process.execPath,
  ['--import', 'tsx', 'src/cli/main.ts', 'worker', '--redis', url, '--threads', '1', '--allow', 'bash'],
  /serving/,
  { ...process.env, ANTHROPIC_API_KEY: '', ANTHROPIC_BASE_URL: emulator.url, FORKCACHE_JOB_SECRET: secret },
);
const ws = mkdtempSync(join(tmpdir(), 'fc-bench-redis-'));
writeFileSync(join(ws, 'a.ts'), 'export const a = 1;\n');
const engine = await ForkEngine.create({
  baseURL: emulator.url,
  apiKey: 'bench',
  workspace: ws,
  runsDir: mkdtempSync(join(tmpdir(), 'fc-bench-redis-runs-')),
  allow: ['bash'],
  distributed: { redis: url, secret, ...(timeoutMs ? { redisTimeoutMs: timeoutMs } : {}) },
});
const snapshot = captureSnapshot({
  model: 'claude-opus-5-5',
  system: 'You are a careful engineer. '.repeat(300),
  tools: TOOL_DECLARATIONS,
  messages: [{ role: 'user', content: 'Survey the workspace.' }],
});
const fan = engine.fanOut(snapshot, ['run `sleep 600` and report']);
let killedAt = 0;
for await (const e of fan) {
  if (e.type === 'turn-end' && !killedAt) {
    redis.kill('SIGKILL');
    killedAt = performance.now();
  }
}
const { forks } = await fan.settled();
const seconds = (performance.now() - killedAt) / 1000;
await engine.close();
host.kill('SIGTERM');
await emulator.close();
process.stdout.write(
  `${JSON.stringify({ bound_ms: timeoutMs ?? 30_000, ended_after_s: Number(seconds.toFixed(1)), status: forks[0]!.status, code: forks[0]!.error?.code, message: forks[0]!.error?.message })}\n`,
);
