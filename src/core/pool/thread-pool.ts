import { createHash } from 'node:crypto';
import type { ResourceLimits, Transferable } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { ForkcacheError } from '../util/errors.ts';

/** Everything a pool of fork threads is made with: two engines whose configs are equal get interchangeable threads. */
export interface ThreadPoolConfig {
  filename: string;
  execArgv: readonly string[];
  minThreads: number;
  maxThreads: number;
  concurrentTasksPerWorker: number;
  maxQueue: number;
  resourceLimits?: ResourceLimits | undefined;
}

/** An idle thread ends after this long (Piscina's `idleTimeout`); so does a parked pool. */
const IDLE_MS = 30_000;
/** Pools parked at once, over all configurations: each keeps at least `minThreads` threads. */
const MAX_PARKED = 2;

interface Parked {
  key: string;
  pool: Piscina;
  timer: NodeJS.Timeout;
}

// The pools of closed engines, newest last: the next engine with the same configuration takes one.
const parked: Parked[] = [];

/**
 * An engine's pool of fork threads (Piscina), its own for as long as the engine is open: no
 * two open engines ever share a thread. When the engine closes, its pool waits for the
 * engine's tasks and is then kept for the next engine of this process made with the same
 * configuration and the same environment, for `IDLE_MS`. Every thread of a pool gets the
 * environment the pool was made with (a copy of `process.env` then), however late it starts:
 * the key holds what the threads see. A thread costs about 240 ms of CPU to start (it loads
 * the fork worker's whole module graph in a fresh isolate, `bench/suite/worker-start.ts`): an
 * app that makes an engine per request, or the MCP server's fork tool, pays it once, not per
 * engine (`bench/engine-per-request.ts`). A parked pool's threads are idle, and Piscina does
 * not let idle threads keep the process alive. `destroy()` ends the threads of a pool still
 * this engine's (open, or parked and not taken since), and never parks them.
 */
export class ThreadPool {
  readonly #key: string;
  readonly #pool: Piscina;
  readonly #running = new Set<Promise<unknown>>();
  #state: 'open' | 'closing' | 'closed' | 'destroyed' = 'open';
  #closed: Promise<void> | undefined;

  constructor(config: ThreadPoolConfig) {
    const env = { ...process.env };
    this.#key = keyOf(config, env);
    this.#pool = takeParked(this.#key) ?? newPool(config, env);
  }

  /** Run one task on a thread of the pool (its `MessagePort` in `transferList`); refused once the pool is closed. */
  run(task: object, options: { transferList: Transferable[] } = { transferList: [] }): Promise<unknown> {
    // the engine refuses work once closed (ENGINE_CLOSED): reaching here is a bug of ours
    if (this.#state !== 'open')
      return Promise.reject(new ForkcacheError('INTERNAL', `the thread pool is ${this.#state}: no task may start`));
    const running = this.#pool.run(task, options as Parameters<Piscina['run']>[1]);
    this.#running.add(running);
    const done = (): void => void this.#running.delete(running);
    running.then(done, done);
    return running;
  }

  /** Wait for this engine's tasks, then park the pool for the next engine (or close it when enough are parked). */
  close(): Promise<void> {
    if (this.#state === 'destroyed') return Promise.resolve();
    this.#closed ??= this.#park();
    return this.#closed;
  }

  async #park(): Promise<void> {
    this.#state = 'closing';
    while (this.#running.size > 0) await Promise.allSettled([...this.#running]);
    if (this.#state !== 'closing') return; // destroyed meanwhile
    this.#state = 'closed';
    park(this.#key, this.#pool);
  }

  /**
   * End the threads now (the tasks running on them fail), if they are still this engine's:
   * once closed, its pool may be another engine's, and is then left alone.
   */
  async destroy(): Promise<void> {
    const state = this.#state;
    this.#state = 'destroyed';
    if (state === 'destroyed') return;
    if (state === 'closed' && !unparkIfThere(this.#pool)) return;
    await this.#pool.destroy();
  }
}

/** The key of a configuration: its fields, and the environment its threads get. */
function keyOf(config: ThreadPoolConfig, env: NodeJS.ProcessEnv): string {
  const sorted = <T>(record: Record<string, T>): [string, T][] =>
    Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const limits = config.resourceLimits && sorted(config.resourceLimits as Record<string, unknown>);
  return createHash('sha256')
    .update(JSON.stringify([{ ...config, resourceLimits: limits ?? null }, sorted(env)]))
    .digest('hex');
}

function newPool(config: ThreadPoolConfig, env: NodeJS.ProcessEnv): Piscina {
  return new Piscina({
    filename: config.filename,
    execArgv: [...config.execArgv],
    env,
    minThreads: config.minThreads,
    maxThreads: config.maxThreads,
    concurrentTasksPerWorker: config.concurrentTasksPerWorker,
    maxQueue: config.maxQueue,
    ...(config.resourceLimits ? { resourceLimits: config.resourceLimits } : {}),
    idleTimeout: IDLE_MS,
  });
}

/** Take entry `at` out of the parked ones, its timer stopped. */
function removeAt(at: number): Parked {
  const [entry] = parked.splice(at, 1);
  clearTimeout(entry!.timer);
  return entry!;
}

/** The newest parked pool of `key`, taken out, or undefined. */
function takeParked(key: string): Piscina | undefined {
  const at = parked.findLastIndex((entry) => entry.key === key);
  return at < 0 ? undefined : removeAt(at).pool;
}

function park(key: string, pool: Piscina): void {
  const entry: Parked = { key, pool, timer: setTimeout(() => unpark(entry), IDLE_MS).unref() };
  parked.push(entry);
  while (parked.length > MAX_PARKED) unpark(parked[0]!);
}

/** Take `pool` out of the parked ones to end it: false when it is not there (another engine took it). */
function unparkIfThere(pool: Piscina): boolean {
  const at = parked.findIndex((entry) => entry.pool === pool);
  if (at >= 0) removeAt(at);
  return at >= 0;
}

function unpark(entry: Parked): void {
  const at = parked.indexOf(entry);
  if (at >= 0) removeAt(at);
  void entry.pool.close().catch(() => {
    // idle threads: nothing of an engine's is lost when one fails to end cleanly
  });
}

/** Close every parked pool now (their threads end): the tests and the bench start from none. */
export async function closeParkedPools(): Promise<void> {
  const all = parked.splice(0);
  for (const entry of all) clearTimeout(entry.timer);
  await Promise.allSettled(all.map((entry) => entry.pool.close()));
}
