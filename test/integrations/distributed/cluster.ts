import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { ForkEngine } from '../../../src/core/engine/engine.ts';
import type { ForkEngineOptions } from '../../../src/core/engine/options.ts';
import { cliArgs } from '../../cli/run-cli.ts';

/** Real processes for the distributed tests: redis-server and `forkcache worker` hosts. */

export const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
export const REDIS_SERVER = process.env['FORKCACHE_REDIS_SERVER'] ?? '/usr/bin/redis-server';
export const HAVE_REDIS = existsSync(REDIS_SERVER);
/** The secret every test host and submitter shares (jobs are signed with it). */
export const TEST_JOB_SECRET = 'test-job-secret-0123456789abcdef0123456789';

/** A directive whose bash call waits until the workspace holds a file named `go`. */
export const HOLD = 'run `while [ ! -f go ]; do sleep 0.05; done` and report';

/**
 * The submitter of the distributed tests: forks go to the hosts on `redis` (signed with the
 * test secret), requests to the emulator at `baseURL`; `options` override the defaults, and
 * `distributed` adds to `{ redis, secret }`.
 */
export function submitter(
  baseURL: string,
  redis: string,
  options: Omit<Partial<ForkEngineOptions>, 'distributed'> & {
    workspace: string;
    runDir: string;
    distributed?: Omit<NonNullable<ForkEngineOptions['distributed']>, 'redis'>;
  },
): Promise<ForkEngine> {
  const { distributed, ...rest } = options;
  return ForkEngine.create({
    baseURL,
    apiKey: 'test',
    allow: ['read_file', 'bash'],
    concurrency: 4,
    ...rest,
    distributed: { redis, secret: TEST_JOB_SECRET, ...distributed },
  });
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

/** A child process whose output is kept, with a way to wait for a line of it. */
export class Proc {
  readonly child: ChildProcess;
  stdout = '';
  stderr = '';
  readonly exited: Promise<number | null>;
  readonly #waiters: { re: RegExp; stream: 'stdout' | 'stderr'; resolve: (line: string) => void }[] = [];

  constructor(command: string, args: string[], env: NodeJS.ProcessEnv) {
    this.child = spawn(command, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env });
    this.child.stdout!.on('data', (d: Buffer) => this.#take('stdout', String(d)));
    this.child.stderr!.on('data', (d: Buffer) => this.#take('stderr', String(d)));
    this.exited = new Promise((resolve) => this.child.on('exit', (code) => resolve(code)));
  }

  #take(stream: 'stdout' | 'stderr', text: string): void {
    this[stream] += text;
    for (const waiter of [...this.#waiters]) {
      const line = this[stream].split('\n').find((l) => waiter.re.test(l));
      if (waiter.stream === stream && line !== undefined) {
        this.#waiters.splice(this.#waiters.indexOf(waiter), 1);
        waiter.resolve(line);
      }
    }
  }

  /** Resolves with the first line (already printed or to come) that matches; rejects if the process exits first. */
  line(re: RegExp, stream: 'stdout' | 'stderr' = 'stdout'): Promise<string> {
    const found = this[stream].split('\n').find((l) => re.test(l));
    if (found !== undefined) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      this.#waiters.push({ re, stream, resolve });
      void this.exited.then((code) =>
        reject(new Error(`exited (${code}) before printing ${re}:\n${this.stdout}\n${this.stderr}`)),
      );
    });
  }

  kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<number | null> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal);
    return this.exited;
  }
}

/** A redis-server of the test's own on a free port of 127.0.0.1, without persistence (a restart starts empty). */
export class RedisServer {
  readonly port: number;
  readonly #extra: string[];
  proc: Proc | undefined;

  private constructor(port: number, extra: string[]) {
    this.port = port;
    this.#extra = extra;
  }

  static async start(extra: string[] = []): Promise<RedisServer> {
    const server = new RedisServer(await freePort(), extra);
    await server.restart();
    return server;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Start it (again, empty) on the same port. */
  async restart(): Promise<void> {
    const args = [
      '--port',
      String(this.port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      ...this.#extra,
    ];
    this.proc = new Proc(REDIS_SERVER, args, process.env);
    await this.proc.line(/Ready to accept connections/);
  }

  async kill(): Promise<void> {
    await this.proc?.kill('SIGKILL');
  }
}

/** The environment of a host or CLI child: the job secret shared, no real key inherited. */
export function hostEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { ...process.env, ANTHROPIC_API_KEY: '', FORKCACHE_JOB_SECRET: TEST_JOB_SECRET, ...extra };
}

/** Start `forkcache worker` and wait until it serves; `hostId` is the id it printed. */
export async function startHost(
  redisUrl: string,
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ proc: Proc; hostId: string }> {
  const proc = new Proc(process.execPath, [...cliArgs(), 'worker', '--redis', redisUrl, ...args], env);
  const line = await proc.line(/^forkcache worker \S+ serving/);
  return { proc, hostId: line.split(' ')[2]! };
}

/** Wait until `ready()` holds, looking again every 20 ms (a condition, not a time window; the test's timeout bounds it). */
export async function until(ready: () => boolean): Promise<void> {
  while (!ready()) await new Promise((resolve) => setTimeout(resolve, 20));
}

/** The records of a JSONL transcript (none yet: empty). */
export function records(path: string): { type: string; turn?: number; status?: string }[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.endsWith('}'))
    .map((line) => JSON.parse(line) as { type: string; turn?: number; status?: string });
}
