import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Job, Queue, QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ForkEngine } from '../../../src/core/engine/engine.ts';
import { DEFAULT_QUEUE } from '../../../src/integrations/distributed/keys.ts';
import { JobSigner } from '../../../src/integrations/distributed/jobs/signing.ts';
import { bigSnapshot, sharedEmulator, workspace } from '../../core/engine/helpers.ts';
import {
  HAVE_REDIS,
  hostEnv,
  type Proc,
  REDIS_SERVER,
  RedisServer,
  startHost,
  TEST_JOB_SECRET,
  HOLD,
  submitter,
} from './cluster.ts';

// The attacker of issue 24, route 5: anyone who can write to Redis (a fork's bash over a shared
// network, another tenant). The host's key is a canary: it must reach no one but the emulator.
const HOST_KEY = 'sk-ant-host-canary-7f3a9c0e5d';

let redis: RedisServer;
let host: Proc;
let listener: Server;
let listenerUrl = '';
const seen: { url: string | undefined; headers: IncomingHttpHeaders }[] = [];
const emulator = sharedEmulator({ script: 'refactor' });
const clients: { close(): Promise<unknown> }[] = [];

beforeAll(async () => {
  if (!HAVE_REDIS) return;
  listener = createServer((req, res) => {
    seen.push({ url: req.url, headers: req.headers });
    res.writeHead(500).end();
  });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  listenerUrl = `http://127.0.0.1:${(listener.address() as { port: number }).port}`;
  redis = await RedisServer.start();
  const env = hostEnv({ ANTHROPIC_BASE_URL: emulator.current.url, ANTHROPIC_API_KEY: HOST_KEY });
  host = (await startHost(redis.url, ['--threads', '1', '--allow', 'read_file,bash'], env)).proc;
});

afterAll(async () => {
  for (const client of clients) await client.close();
  await host?.kill();
  await redis?.kill();
  listener?.close();
});

/** The attacker's edit: every `baseURL` in the job, inside a JSON string too (a signed body), now points at the listener. */
function redirect(value: unknown): unknown {
  if (typeof value === 'string') {
    try {
      const inner: unknown = JSON.parse(value);
      if (typeof inner === 'object' && inner !== null) return JSON.stringify(redirect(inner));
    } catch {
      // a plain string
    }
    return value;
  }
  if (Array.isArray(value)) return value.map(redirect);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, k === 'baseURL' ? listenerUrl : redirect(v)]));
}

/** Every key and value in Redis, as text. */
async function everythingIn(url: string): Promise<string> {
  const raw = new Redis(url);
  try {
    const parts: string[] = [];
    for (const key of await raw.keys('*')) {
      const type = await raw.type(key);
      const value =
        type === 'string'
          ? await raw.get(key)
          : type === 'hash'
            ? await raw.hgetall(key)
            : type === 'list'
              ? await raw.lrange(key, 0, -1)
              : type === 'set'
                ? await raw.smembers(key)
                : type === 'zset'
                  ? await raw.zrange(key, 0, -1)
                  : await raw.xrange(key, '-', '+');
      parts.push(key, JSON.stringify(value));
    }
    return parts.join('\n');
  } finally {
    raw.disconnect();
  }
}

function engine(ws: string): Promise<ForkEngine> {
  return submitter(emulator.current.url, redis.url, {
    apiKey: 'submitter-key',
    workspace: ws,
    runDir: workspace({}),
    concurrency: 1,
    warm: 'none',
  });
}

/** A queue handle of the attacker's own (plain BullMQ on the same Redis). */
function attackerQueue(): { queue: Queue; events: QueueEvents } {
  const queue = new Queue(DEFAULT_QUEUE, { connection: { url: redis.url } });
  const events = new QueueEvents(DEFAULT_QUEUE, { connection: { url: redis.url } });
  clients.push(queue, events);
  return { queue, events };
}

describe.skipIf(!HAVE_REDIS)(`jobs in Redis cannot be forged (needs ${REDIS_SERVER})`, () => {
  it('a waiting job rewritten in Redis to send its fork to a listener is refused: the listener sees no request and no key', async () => {
    const ws = workspace({ 'a.ts': 'export const a = 1;\n' });
    const fc = await engine(ws);
    const raw = new Redis(redis.url);
    const { queue } = attackerQueue();
    try {
      const fan = fc.fanOut(bigSnapshot(`forge-${Date.now()}`), [
        // holds the only slot (global concurrency 1) until the attacker is done
        HOLD,
        'read a.ts and report',
      ]);
      let attacked = false;
      for await (const e of fan) {
        if (attacked || e.type !== 'turn-end' || e.forkId !== fan.forks[0]!.forkId) continue;
        attacked = true;
        let waiting: Job[] = [];
        while (waiting.length === 0) waiting = await queue.getWaiting();
        const key = `bull:${DEFAULT_QUEUE}:${waiting[0]!.id}`;
        await raw.hset(key, 'data', JSON.stringify(redirect(JSON.parse((await raw.hget(key, 'data'))!))));
        writeFileSync(join(ws, 'go'), '');
      }
      const { forks } = await fan.settled();
      expect(forks[0]!.status).toBe('completed');
      expect(forks[1]).toMatchObject({ status: 'failed', turns: 0, error: { code: 'JOB_SIGNATURE_INVALID' } });
      expect(forks[1]!.error!.message).toMatch(/signature does not match its data/);
      expect(seen).toEqual([]); // no request, so no key, reached the listener
      expect(host.stderr).toMatch(/refused job .*JOB_SIGNATURE_INVALID/);
    } finally {
      raw.disconnect();
      await fc.close();
    }
  });

  it('a forged result for a running fork is not believed: the fork ends as its transcript says', async () => {
    const ws = workspace({});
    const fc = await engine(ws);
    const raw = new Redis(redis.url);
    const { queue } = attackerQueue();
    try {
      const fan = fc.fanOut(bigSnapshot(`forge-result-${Date.now()}`), [HOLD]);
      for await (const e of fan) {
        if (e.type !== 'turn-end') continue;
        const [active] = await queue.getActive();
        const forged = {
          status: 'completed',
          turns: 9,
          toolCalls: 0,
          requests: [],
          finalText: 'Scope: x\nResult: done',
          messages: [],
          filesChanged: [],
        };
        await raw.xadd(
          `bull:${DEFAULT_QUEUE}:events`,
          '*',
          'event',
          'completed',
          'jobId',
          active!.id!,
          'returnvalue',
          JSON.stringify(forged),
        );
      }
      const { forks } = await fan.settled();
      expect(forks[0]).toMatchObject({ status: 'failed', turns: 1, error: { code: 'JOB_SIGNATURE_INVALID' } });
      expect(forks[0]!.error!.message).toMatch(/the result of job .* refused: it is not signed/);
    } finally {
      writeFileSync(join(ws, 'go'), '');
      raw.disconnect();
      await fc.close();
    }
  });

  it("a job's signed data replayed under another fork's id, or the same fork's again, and an unsigned job are refused; nothing is sent", async () => {
    const fc = await engine(workspace({ 'a.ts': 'export const a = 1;\n' }));
    const { queue, events } = attackerQueue();
    try {
      const fan = fc.fanOut(bigSnapshot(`replay-${Date.now()}`), ['read a.ts and report']);
      const { forks } = await fan.settled();
      expect(forks[0]!.status).toBe('completed');
      const genuine = (await queue.getCompleted()).find((j) => j.id!.startsWith(`${forks[0]!.forkId}.`))!;
      const requests = emulator.current.stats().requests.total;
      const other = forks[0]!.forkId.replace(/-f\d+$/, '-f02');
      const replays = [
        { id: `${other}.${Date.now()}.1`, data: genuine.data as unknown, why: /signature does not match/ },
        { id: `${forks[0]!.forkId}.${Date.now()}.2`, data: genuine.data as unknown, why: /signature does not match/ },
        {
          id: `${other}.${Date.now()}.3`,
          data: JSON.parse((genuine.data as { body: string }).body) as unknown,
          why: /not signed/,
        },
      ];
      for (const replay of replays) {
        const job = await queue.add('fork', replay.data, { jobId: replay.id });
        await expect(job.waitUntilFinished(events)).rejects.toThrow(/JOB_SIGNATURE_INVALID/);
        expect((await Job.fromId(queue, replay.id))!.failedReason).toMatch(replay.why);
      }
      expect(emulator.current.stats().requests.total).toBe(requests); // the host sent nothing for them
      const stored = await everythingIn(redis.url);
      expect(stored).toContain(`bull:${DEFAULT_QUEUE}:${genuine.id}`); // the jobs are there, signed...
      expect(stored).not.toContain(TEST_JOB_SECRET); // ...and the secret is not
    } finally {
      await fc.close();
    }
  });

  it('a job signed with the secret still cannot widen the host: another endpoint or a tool it does not allow is refused', async () => {
    const { queue, events } = attackerQueue();
    const signer = new JobSigner(TEST_JOB_SECRET, DEFAULT_QUEUE);
    const fc = await engine(workspace({ 'a.ts': 'export const a = 1;\n' }));
    try {
      // a genuine job to start from: the one a submitter with the secret would send
      const { forks } = await fc.fanOut(bigSnapshot(`widen-${Date.now()}`), ['read a.ts and report']).settled();
      const done = (await queue.getCompleted()).find((j) => j.id!.startsWith(`${forks[0]!.forkId}.`));
      const data = JSON.parse((done!.data as { body: string }).body) as Record<string, any>;
      const cases = [
        {
          change: { api: { ...data['api'], baseURL: listenerUrl } },
          why: /api\.baseURL: the job asks for .* only to http:\/\/127\.0\.0\.1/,
        },
        {
          change: { tools: { ...data['tools'], allow: ['read_file', 'write_file'] } },
          why: /tools\.allow: write_file not allowed on this host/,
        },
        {
          change: { tools: { ...data['tools'], sandbox: 'none' } },
          why: /tools\.sandbox: .* "none", this host runs bash in "auto"/,
        },
      ];
      for (const [i, { change, why }] of cases.entries()) {
        const jobId = `${data['forkId']}.${Date.now()}.widen${i}`;
        const job = await queue.add('fork', signer.seal('job', jobId, { ...data, ...change }), { jobId });
        await expect(job.waitUntilFinished(events)).rejects.toThrow(why);
      }
      expect(seen).toEqual([]);
      expect(JSON.stringify(seen)).not.toContain(HOST_KEY);
    } finally {
      await fc.close();
    }
  });
});
