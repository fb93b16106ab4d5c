import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { closeParkedPools, ThreadPool } from '../../../src/core/pool/thread-pool.ts';
import { tsxLoaderUrl } from '../../../src/core/pool/worker-file.ts';
import { THREAD_ID_POOL as CONFIG } from '../../fixtures/thread-id-pool.ts';
import type { ThreadIdResult, ThreadIdTask } from '../../fixtures/workers/thread-id-worker.ts';

const MARKER = 'FORKCACHE_THREAD_POOL_TEST';

/** `Atomics.waitAsync` (Node 16+; TypeScript declares it from lib es2024 on). */
const waitAsync = (
  Atomics as unknown as {
    waitAsync(array: Int32Array, index: number, value: number): { value: Promise<string> | string };
  }
).waitAsync;

const resultOf = (pool: ThreadPool, task: ThreadIdTask = {}): Promise<ThreadIdResult> =>
  pool.run(task) as Promise<ThreadIdResult>;
const threadOf = async (pool: ThreadPool, task: ThreadIdTask = {}): Promise<number> =>
  (await resultOf(pool, task)).threadId;

/** A task that runs until `release()`: `started` resolves once it runs on its thread. */
function held(pool: ThreadPool): { result: Promise<ThreadIdResult>; started: Promise<unknown>; release(): void } {
  const hold = new Int32Array(new SharedArrayBuffer(8));
  const result = resultOf(pool, { hold });
  return {
    result,
    started: Promise.resolve(waitAsync(hold, 0, 0).value),
    release: () => {
      Atomics.store(hold, 1, 1);
      Atomics.notify(hold, 1);
    },
  };
}

/** A pool's thread id, and the pool closed (parked). */
async function closedAfterOneTask(config = CONFIG): Promise<number> {
  const pool = new ThreadPool(config);
  const id = await threadOf(pool);
  await pool.close();
  return id;
}

// other files of this thread may have parked pools of their own: each test starts with none
beforeEach(closeParkedPools);
afterAll(closeParkedPools);

describe('ThreadPool: an engine’s threads are kept for the next engine', () => {
  it('the next pool of the same configuration runs on the closed one’s thread', async () => {
    const first = await closedAfterOneTask();
    const next = new ThreadPool(CONFIG);
    expect(await threadOf(next)).toBe(first);
    await next.destroy();
  });

  it('two open pools never share a thread', async () => {
    const a = new ThreadPool(CONFIG);
    const b = new ThreadPool(CONFIG);
    expect(await threadOf(a)).not.toBe(await threadOf(b));
    await Promise.all([a.destroy(), b.destroy()]);
  });

  it('another configuration, another environment or a destroyed pool: new threads', async () => {
    const first = await closedAfterOneTask();
    const wider = await closedAfterOneTask({ ...CONFIG, maxThreads: 2 });
    expect(wider).not.toBe(first);

    process.env[MARKER] = 'other';
    try {
      const other = new ThreadPool(CONFIG);
      expect(await resultOf(other)).toEqual({ threadId: expect.not.toSatisfy((id) => id === first), marker: 'other' });
      await other.destroy();
    } finally {
      delete process.env[MARKER];
    }

    const again = new ThreadPool(CONFIG);
    expect(await threadOf(again)).toBe(first);
    await again.destroy(); // not parked
    const fresh = new ThreadPool(CONFIG);
    expect(await threadOf(fresh)).not.toBe(first);
    await fresh.destroy();
  });

  it('every thread of a pool gets the environment the pool was made with, however late it starts', async () => {
    // one task per thread: the second task starts a second thread, after the environment changed
    const pool = new ThreadPool({ ...CONFIG, maxThreads: 2, concurrentTasksPerWorker: 1 });
    const first = held(pool);
    await first.started;
    process.env[MARKER] = 'set after the pool was made';
    let late: ThreadIdResult;
    try {
      late = await resultOf(pool);
    } finally {
      delete process.env[MARKER];
      first.release();
    }
    const early = await first.result;
    expect(late.threadId).not.toBe(early.threadId);
    expect([early.marker, late.marker]).toEqual([null, null]);
    await pool.close();
    // and the next pool made in that environment (none set) gets both threads
    const next = new ThreadPool({ ...CONFIG, maxThreads: 2, concurrentTasksPerWorker: 1 });
    expect((await resultOf(next)).marker).toBeNull();
    await next.destroy();
  });

  it('close waits for the tasks still running before the threads go to another pool', async () => {
    const pool = new ThreadPool(CONFIG);
    const task = held(pool);
    const order: string[] = [];
    void task.result.then(() => order.push('task'));
    await task.started;
    const closed = pool.close().then(() => order.push('closed'));
    task.release();
    const { threadId } = await task.result;
    await closed;
    expect(order).toEqual(['task', 'closed']);
    await expect(pool.run({})).rejects.toThrow(/the thread pool is closed/);
    const next = new ThreadPool(CONFIG);
    expect(await threadOf(next)).toBe(threadId);
    await next.destroy();
  });

  it('destroy of a closed pool never touches the engine that took its threads', async () => {
    const a = new ThreadPool(CONFIG);
    const id = await threadOf(a);
    await a.close();
    const b = new ThreadPool(CONFIG);
    const task = held(b);
    await task.started; // b runs on a's old thread
    await a.destroy(); // a's cleanup, late: b's now
    task.release();
    expect(await task.result).toEqual({ threadId: id, marker: null });
    await b.destroy();
  });

  it('destroy of a closed pool nobody took ends it; destroy while closing never parks', async () => {
    const a = new ThreadPool(CONFIG);
    const first = await threadOf(a);
    await a.close();
    await a.destroy();
    const b = new ThreadPool(CONFIG);
    const second = await threadOf(b);
    expect(second).not.toBe(first);

    const task = held(b);
    await task.started;
    const closing = b.close();
    const destroyed = b.destroy();
    await expect(task.result).rejects.toThrow(); // its thread ended under it
    await Promise.all([closing, destroyed]);
    const c = new ThreadPool(CONFIG);
    expect(await threadOf(c)).not.toBe(second);
    await c.destroy();
  });

  it('at most two pools are parked: a third closed one ends its threads', async () => {
    const pools = [new ThreadPool(CONFIG), new ThreadPool(CONFIG), new ThreadPool(CONFIG)];
    const ids = await Promise.all(pools.map((pool) => threadOf(pool)));
    for (const pool of pools) await pool.close();
    const reopened = [new ThreadPool(CONFIG), new ThreadPool(CONFIG), new ThreadPool(CONFIG)];
    const now = await Promise.all(reopened.map((pool) => threadOf(pool)));
    // the newest two are taken back, newest first; the oldest was closed when the third was parked
    expect(now.slice(0, 2)).toEqual([ids[2], ids[1]]);
    expect(ids).not.toContain(now[2]);
    await Promise.all(reopened.map((pool) => pool.destroy()));
  });

  it('a parked pool does not keep the process alive', async () => {
    const script = fileURLToPath(new URL('../../fixtures/thread-pool-exit.ts', import.meta.url));
    const child = spawn(process.execPath, ['--import', tsxLoaderUrl(), script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code).toBe(0);
    const { parked, alive } = JSON.parse(out) as { parked: number; alive: string[] };
    expect(parked).toBeGreaterThan(0);
    // its timer, its thread and the thread's port are all unreferenced once it is parked
    expect(alive).not.toContain('Timeout');
    expect(alive).not.toContain('MessagePort');
  });
});
