import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { closeParkedPools, ThreadPool, type ThreadPoolConfig } from '../../../src/core/pool/thread-pool.ts';
import { tsxLoaderUrl } from '../../../src/core/pool/worker-file.ts';
import type { ThreadIdTask } from '../../fixtures/workers/thread-id-worker.ts';

const CONFIG: ThreadPoolConfig = {
  filename: fileURLToPath(new URL('../../fixtures/workers/thread-id-worker.ts', import.meta.url)),
  execArgv: ['--import', tsxLoaderUrl()],
  minThreads: 1,
  maxThreads: 1,
  concurrentTasksPerWorker: 2,
  maxQueue: Infinity,
};

/** `Atomics.waitAsync` (Node 16+; TypeScript declares it from lib es2024 on). */
const waitAsync = (
  Atomics as unknown as {
    waitAsync(array: Int32Array, index: number, value: number): { value: Promise<string> | string };
  }
).waitAsync;

const threadOf = (pool: ThreadPool, task: ThreadIdTask = {}): Promise<number> => pool.run(task) as Promise<number>;

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

    // a thread copies process.env when it starts: a changed environment gets its own
    process.env['FORKCACHE_THREAD_POOL_TEST'] = '1';
    try {
      const other = new ThreadPool(CONFIG);
      expect(await threadOf(other)).not.toBe(first);
      await other.destroy();
    } finally {
      delete process.env['FORKCACHE_THREAD_POOL_TEST'];
    }

    const again = new ThreadPool(CONFIG);
    expect(await threadOf(again)).toBe(first);
    await again.destroy(); // not parked
    const fresh = new ThreadPool(CONFIG);
    expect(await threadOf(fresh)).not.toBe(first);
    await fresh.destroy();
  });

  it('close waits for the tasks still running before the threads go to another pool', async () => {
    const pool = new ThreadPool(CONFIG);
    const hold = new Int32Array(new SharedArrayBuffer(8));
    const order: string[] = [];
    const task = threadOf(pool, { hold }).then((id) => (order.push('task'), id));
    await waitAsync(hold, 0, 0).value; // the task runs
    const closed = pool.close().then(() => order.push('closed'));
    Atomics.store(hold, 1, 1);
    Atomics.notify(hold, 1);
    const id = await task;
    await closed;
    expect(order).toEqual(['task', 'closed']);
    const next = new ThreadPool(CONFIG);
    expect(await threadOf(next)).toBe(id);
    await next.destroy();
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
    expect(out).toMatch(/^parked \d+\n$/);
    expect(code).toBe(0);
  });
});
