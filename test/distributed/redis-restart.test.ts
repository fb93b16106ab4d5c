import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ForkEngine } from '../../src/engine/engine.ts';
import { transcriptPath } from '../../src/run-dir/files.ts';
import { bigSnapshot, sharedEmulator, workspace } from '../engine/helpers.ts';
import {
  HAVE_REDIS,
  hostEnv,
  type Proc,
  records,
  REDIS_SERVER,
  RedisServer,
  startHost,
  TEST_JOB_SECRET,
  until,
} from './cluster.ts';

const HOLD = 'run `while [ ! -f go ]; do sleep 0.05; done` and report';

let redis: RedisServer;
const hosts: Proc[] = [];
const emulator = sharedEmulator({ script: 'refactor' });

beforeAll(async () => {
  if (!HAVE_REDIS) return;
  redis = await RedisServer.start();
  const env = hostEnv({ ANTHROPIC_BASE_URL: emulator.current.url });
  for (let i = 0; i < 2; i++)
    hosts.push((await startHost(redis.url, ['--threads', '1', '--allow', 'read_file,bash'], env)).proc);
}, 60_000);

afterAll(async () => {
  for (const host of hosts) await host.kill();
  await redis?.kill();
});

describe.skipIf(!HAVE_REDIS)(`Redis restarted empty mid-run (needs ${REDIS_SERVER})`, () => {
  // The probe of issue 25: the hosts completed the forks while Redis was away, Redis came back
  // empty, and the submitter, whose jobs were gone, called them "cancelled after 0 turns".
  it('forks the hosts finished while Redis was away are completed, from their transcripts, not guessed', async () => {
    const ws = workspace({});
    const engine = await ForkEngine.create({
      baseURL: emulator.current.url,
      apiKey: 'test',
      workspace: ws,
      runDir: workspace({}),
      allow: ['bash'],
      concurrency: 4,
      // no shared budget: the hosts' requests need no Redis; a long timeout: only the restart ends the run
      admission: 'off',
      distributed: { redis: redis.url, secret: TEST_JOB_SECRET, redisTimeoutMs: 600_000 },
    });
    try {
      const fan = engine.fanOut(bigSnapshot(`restart-${Date.now()}`), [HOLD, HOLD, HOLD]);
      const holding = new Set<string>();
      let done: Promise<void> | undefined;
      for await (const e of fan) {
        if (e.type === 'turn-end') holding.add(e.forkId);
        if (!done && holding.size === 3) {
          done = (async () => {
            await redis.kill();
            writeFileSync(join(ws, 'go'), ''); // the forks finish on their hosts, Redis away
            const paths = fan.forks.map((f) => transcriptPath(join(engine.options.runDir!, fan.id), f.id));
            await until(() => paths.every((p) => records(p).some((r) => r.type === 'end' && r.status === 'completed')));
            await redis.restart();
          })();
        }
      }
      await done;
      const { forks, summary } = await fan.settled();
      expect(forks.map((f) => [f.status, f.turns])).toEqual([
        ['completed', 2],
        ['completed', 2],
        ['completed', 2],
      ]);
      expect(summary.requests).toBe(6); // the turns done while Redis was away are in the ledger
    } finally {
      await engine.close();
    }
  }, 120_000);
});
