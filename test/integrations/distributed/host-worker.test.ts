import { hostname } from 'node:os';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { ForkcacheError } from '../../../src/core/util/errors.ts';
import type { RunningFork } from '../../../src/integrations/distributed/host/job.ts';
import {
  cancelFromMessage,
  jobsGone,
  runningJobIds,
  stopJobs,
} from '../../../src/integrations/distributed/host/running.ts';
import { prefixCache, workerSettings } from '../../../src/integrations/distributed/host/worker.ts';
import { DEFAULT_QUEUE } from '../../../src/integrations/distributed/keys.ts';
import { HAVE_REDIS, REDIS_SERVER, RedisServer, TEST_JOB_SECRET } from './cluster.ts';

/*
 * The steps `startHostWorker` runs (settle → connect → take jobs → watch Redis), each on its
 * own where it decides something; the whole host runs in the distributed tests, as
 * `forkcache worker` processes on a real redis-server.
 */

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

function fork(jobId: string, forkId: string): RunningFork {
  return { jobId, forkId, abort: new AbortController() };
}

/** Why a fork was stopped: its abort reason's message (undefined: still running). */
const reasonOf = (f: RunningFork): string | undefined =>
  f.abort.signal.aborted ? (f.abort.signal.reason as ForkcacheError).message : undefined;

describe('settle: the host worker settings', () => {
  it('fills in the defaults, and shows the Redis URL without its password', () => {
    const settings = workerSettings({ redis: 'redis://:hunter2-password@127.0.0.1:6379', secret: TEST_JOB_SECRET });
    expect(settings).toMatchObject({
      queue: DEFAULT_QUEUE,
      hostId: `${hostname()}-${process.pid}`,
      threads: 2,
      lockDuration: 30_000,
      shown: 'redis://127.0.0.1:6379',
      hostTools: {},
    });
    expect(settings.policy.registeredTools).toEqual([]);
  });

  it('takes what it is given: queue, id, threads, lock, log, host tools', () => {
    const lines: string[] = [];
    const settings = workerSettings({
      redis: 'redis://127.0.0.1:6379',
      secret: TEST_JOB_SECRET,
      queue: 'q2',
      hostId: 'h1',
      threads: 5,
      lockDurationMs: 9_000,
      log: (line) => lines.push(line),
      hostTools: { lookup: { readOnly: true, execute: () => 'x' } },
    });
    expect(settings).toMatchObject({ queue: 'q2', hostId: 'h1', threads: 5, lockDuration: 9_000 });
    expect(settings.policy.registeredTools).toEqual([{ name: 'lookup', readOnly: true }]);
    settings.log('hello');
    expect(lines).toEqual(['hello']);
  });

  it('refuses to start without the job secret, before anything connects', () => {
    const saved = process.env['FORKCACHE_JOB_SECRET'];
    delete process.env['FORKCACHE_JOB_SECRET'];
    cleanup.push(() => {
      if (saved !== undefined) process.env['FORKCACHE_JOB_SECRET'] = saved;
    });
    expect(() => workerSettings({ redis: 'redis://127.0.0.1:1' })).toThrow(/FORKCACHE_JOB_SECRET/);
    expect(() => workerSettings({ redis: 'redis://127.0.0.1:1', secret: 'short' })).toThrow(/at least/);
  });
});

describe('the frozen heads a host holds', () => {
  it('loads each once, however many forks ask at once, and loads again after a failure', async () => {
    const loads: string[] = [];
    let fail = true;
    const prefixFor = prefixCache(async (sha256) => {
      loads.push(sha256);
      if (fail) throw new Error(`no head ${sha256}`);
      return new SharedArrayBuffer(8);
    });
    await expect(prefixFor('a')).rejects.toThrow(/no head a/);
    fail = false;
    const [one, two] = await Promise.all([prefixFor('a'), prefixFor('a')]);
    expect(one).toBe(two);
    expect(await prefixFor('a')).toBe(one);
    expect(await prefixFor('b')).not.toBe(one);
    expect(loads).toEqual(['a', 'a', 'b']);
  });
});

describe('stopping the forks running on a host', () => {
  it('stops the forks of the jobs named, each with the reason given', () => {
    const running = new Set([fork('j1', 'f1'), fork('j1', 'f1'), fork('j2', 'f2')]);
    expect(runningJobIds(running)).toEqual(['j1', 'j2']);
    const lost = new ForkcacheError('REDIS_LOST', 'lost');
    stopJobs(running, ['j1'], lost);
    const [first, second, other] = [...running].map((f) => f.abort.signal.reason as unknown);
    expect(first).toBe(lost);
    expect(second).toBe(lost);
    expect(other).toBeUndefined();
  });

  it('a cancel names a job, or else a fork (every run of it); anything not JSON is ignored', () => {
    const [a, b, c] = [fork('j1', 'f1'), fork('j2', 'f1'), fork('j3', 'f3')];
    const running = new Set([a, b, c]);
    cancelFromMessage(running, 'not json');
    expect([...running].map(reasonOf)).toEqual([undefined, undefined, undefined]);
    cancelFromMessage(running, JSON.stringify({ forkId: 'f1', jobId: 'j2' }));
    expect([...running].map(reasonOf)).toEqual([undefined, 'fork cancelled', undefined]);
    cancelFromMessage(running, JSON.stringify({ forkId: 'f1' }));
    expect([...running].map(reasonOf)).toEqual(['fork cancelled', 'fork cancelled', undefined]);
  });
});

describe.skipIf(!HAVE_REDIS)(`a restarted Redis (needs ${REDIS_SERVER})`, () => {
  it('names the running jobs it no longer holds', async () => {
    const server = await RedisServer.start();
    const client = new Redis(server.url, { maxRetriesPerRequest: null });
    client.on('error', () => undefined);
    cleanup.push(
      () => server.kill(),
      () => client.disconnect(),
    );
    await client.hset('bull:q:kept', 'name', 'fork');
    const running = new Set([fork('kept', 'f1'), fork('gone', 'f2'), fork('gone', 'f3')]);
    expect(await jobsGone(client, 'q', running)).toEqual(['gone']);
    expect(await jobsGone(client, 'q', new Set())).toEqual([]);
  });
});
