import { createHash } from 'node:crypto';
import type { ResourceLimits, Transferable } from 'node:worker_threads';
import { Piscina } from 'piscina';

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
 * configuration and the same environment (a thread copies `process.env` when it starts), for
 * `IDLE_MS`. A thread costs about 240 ms of CPU to start (it loads the fork worker's whole
 * module graph in a fresh isolate, `bench/suite/worker-start.ts`): an app that makes an
 * engine per request, or an MCP server's fork tool, pays it once, not per engine. A parked
 * pool's threads are idle, and Piscina does not let idle threads keep the process alive.
 * `destroy()` ends the threads and never parks them.
 */
export class ThreadPool {
  readonly #key: string;
  readonly #pool: Piscina;
  readonly #running = new Set<Promise<unknown>>();
  #open = true;

  constructor(config: ThreadPoolConfig) {
    this.#key = keyOf(config);
    this.#pool = takeParked(this.#key) ?? newPool(config);
  }

  /** Run one task on a thread of the pool (its `MessagePort` in `transferList`). */
  run(task: object, options: { transferList: Transferable[] } = { transferList: [] }): Promise<unknown> {
    const running = this.#pool.run(task, options as Parameters<Piscina['run']>[1]);
    this.#running.add(running);
    const done = (): void => void this.#running.delete(running);
    running.then(done, done);
    return running;
  }

  /** Wait for this engine's tasks, then park the pool for the next engine (or close it when enough are parked). */
  async close(): Promise<void> {
    if (!this.#open) return;
    this.#open = false;
    while (this.#running.size > 0) await Promise.allSettled([...this.#running]);
    park(this.#key, this.#pool);
  }

  /** End the threads now: the tasks running on them fail. */
  async destroy(): Promise<void> {
    this.#open = false;
    await this.#pool.destroy();
  }
}

/** The key of a configuration: its fields, and the environment a new thread would copy. */
function keyOf(config: ThreadPoolConfig): string {
  const env = Object.entries(process.env).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const limits = config.resourceLimits && Object.entries(config.resourceLimits).sort(([a], [b]) => (a < b ? -1 : 1));
  return createHash('sha256')
    .update(JSON.stringify([{ ...config, resourceLimits: limits ?? null }, env]))
    .digest('hex');
}

function newPool(config: ThreadPoolConfig): Piscina {
  return new Piscina({
    filename: config.filename,
    execArgv: [...config.execArgv],
    minThreads: config.minThreads,
    maxThreads: config.maxThreads,
    concurrentTasksPerWorker: config.concurrentTasksPerWorker,
    maxQueue: config.maxQueue,
    ...(config.resourceLimits ? { resourceLimits: config.resourceLimits } : {}),
    idleTimeout: IDLE_MS,
  });
}

function takeParked(key: string): Piscina | undefined {
  for (let i = parked.length - 1; i >= 0; i--) {
    const entry = parked[i]!;
    if (entry.key !== key) continue;
    parked.splice(i, 1);
    clearTimeout(entry.timer);
    return entry.pool;
  }
  return undefined;
}

function park(key: string, pool: Piscina): void {
  const entry: Parked = { key, pool, timer: setTimeout(() => unpark(entry), IDLE_MS).unref() };
  parked.push(entry);
  while (parked.length > MAX_PARKED) unpark(parked[0]!);
}

function unpark(entry: Parked): void {
  const at = parked.indexOf(entry);
  if (at >= 0) parked.splice(at, 1);
  clearTimeout(entry.timer);
  void entry.pool.close().catch(() => {
    // idle threads: nothing of an engine's is lost when one fails to end cleanly
  });
}

/** Close every parked pool now (their threads end): for a host that wants no idle thread left. */
export async function closeParkedPools(): Promise<void> {
  const all = parked.splice(0);
  for (const entry of all) clearTimeout(entry.timer);
  await Promise.allSettled(all.map((entry) => entry.pool.close()));
}
