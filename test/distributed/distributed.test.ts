import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ForkEngine } from '../../src/engine/engine.ts';
import { bigSnapshot, sharedEmulator, workspace } from '../engine/helpers.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const REDIS = process.env['FORKCACHE_REDIS_SERVER'] ?? '/usr/bin/redis-server';
const HAVE_REDIS = existsSync(REDIS);

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

/** Start a process and resolve once a line of its stdout matches. */
function startUntil(command: string, args: string[], ready: RegExp): Promise<{ child: ChildProcess; line: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ANTHROPIC_API_KEY: '' },
    });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d;
      const line = out.split('\n').find((l) => ready.test(l));
      if (line) resolve({ child, line });
    });
    child.on('exit', (code) => reject(new Error(`${command} exited (${code}) before it was ready: ${out}`)));
  });
}

const processes: ChildProcess[] = [];
let redisUrl = '';
const hosts = new Map<string, ChildProcess>();
const emulator = sharedEmulator({ script: 'refactor' });

beforeAll(async () => {
  if (!HAVE_REDIS) return;
  const port = await freePort();
  const redis = await startUntil(
    REDIS,
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    /Ready to accept connections/,
  );
  processes.push(redis.child);
  redisUrl = `redis://127.0.0.1:${port}`;
  for (let i = 0; i < 2; i++) {
    const host = await startUntil(
      process.execPath,
      ['--import', 'tsx', 'src/cli/main.ts', 'worker', '--redis', redisUrl, '--threads', '1', '--lock-ms', '1500'],
      /^forkcache worker \S+ serving/,
    );
    processes.push(host.child);
    hosts.set(host.line.split(' ')[2]!, host.child);
  }
}, 60_000);

afterAll(() => {
  for (const child of processes) child.kill('SIGKILL');
});

describe.skipIf(!HAVE_REDIS)(`distributed backend (needs ${REDIS}; .ci/run installs redis-server)`, () => {
  it('runs a fan-out on two hosts; a host killed mid-fork: its fork resumes elsewhere, nothing completes twice, the ledger is whole', async () => {
    const ws = workspace({ 'a.ts': 'export const a = 1;\n', 'b.ts': 'export const b = 2;\n' });
    const runDir = workspace({});
    const engine = await ForkEngine.create({
      baseURL: emulator.current.url,
      apiKey: 'test',
      workspace: ws,
      runDir,
      allow: ['read_file', 'bash'],
      concurrency: 4,
      distributed: { redis: redisUrl },
    });
    try {
      const fan = engine.fanOut(bigSnapshot(`dist-${Date.now()}`), [
        'run `sleep 4` and report',
        'read a.ts and report',
        'read b.ts and report',
        'run `sleep 1` and report',
      ]);
      const hostOf = new Map<string, string>();
      const seenHosts = new Set<string>();
      let killed: string | undefined;
      for await (const e of fan) {
        if (e.type === 'fork-host') {
          hostOf.set(e.forkId, e.hostId);
          seenHosts.add(e.hostId);
        }
        // the first fork has asked for its (slow) bash call: kill the host that runs it
        if (!killed && e.type === 'turn-end' && e.forkId === fan.forks[0]!.id) {
          killed = hostOf.get(e.forkId)!;
          hosts.get(killed)!.kill('SIGKILL');
        }
      }
      const { forks, summary } = await fan.settled();
      // the first fork's bash call died with its host: it says so, and is not done (issue 23)
      expect(forks.map((f) => f.status)).toEqual(['not_done', 'completed', 'completed', 'completed']);
      expect(seenHosts.size).toBe(2); // both hosts served forks
      expect(hostOf.get(forks[0]!.forkId)).not.toBe(killed); // the killed host's fork moved
      for (const fork of forks) {
        const lines = readFileSync(fork.transcriptPath!, 'utf8')
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as { type: string; turn?: number; status?: string });
        expect(lines.filter((l) => l.type === 'end')).toEqual([expect.objectContaining({ status: fork.status })]); // ended once
        const turns = lines.filter((l) => l.type === 'turn').map((l) => l.turn);
        expect(turns).toEqual(turns.map((_, i) => i + 1)); // no turn ran twice
      }
      expect(forks[0]!.report?.issues).toMatch(/interrupted/); // the bash call in flight was not repeated
      expect(summary.requests).toBe(forks.reduce((n, f) => n + f.turns, 0)); // every request in the ledger
      expect(summary.cache.cache_efficiency).toBe(1);
    } finally {
      await engine.close();
    }
  });
});

describe.skipIf(!HAVE_REDIS)('distributed cancellation', () => {
  it('cancels a running fork on its host and a waiting one before any host takes it', async () => {
    const engine = await ForkEngine.create({
      baseURL: emulator.current.url,
      apiKey: 'test',
      workspace: workspace(),
      runDir: workspace({}),
      allow: ['bash'],
      concurrency: 1,
      warm: 'none',
      distributed: { redis: redisUrl },
    });
    try {
      const fan = engine.fanOut(bigSnapshot(`dist-cancel-${Date.now()}`), [
        'run `sleep 20` and report',
        'run `sleep 20` and report',
      ]);
      for await (const e of fan) {
        if (e.type === 'turn-end') fan.cancel(); // one fork is in its bash call; the other waits in the queue (global concurrency 1)
      }
      const { forks } = await fan.settled();
      expect(forks.map((f) => f.status)).toEqual(['cancelled', 'cancelled']);
      expect(forks.filter((f) => f.turns === 0)).toHaveLength(1); // the waiting one never ran
    } finally {
      await engine.close();
    }
  });
});
