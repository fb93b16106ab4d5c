import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { transcriptPath } from '../../../src/core/run-dir/files.ts';
import { bigSnapshot, sharedEmulator, workspace } from '../../core/engine/helpers.ts';
import {
  HAVE_REDIS,
  hostEnv,
  type Proc,
  records,
  REDIS_SERVER,
  RedisServer,
  startHost,
  until,
  HOLD,
  submitter,
} from './cluster.ts';

let redis: RedisServer;
const hosts: Proc[] = [];
const emulator = sharedEmulator({ script: 'refactor' });

beforeAll(async () => {
  if (!HAVE_REDIS) return;
  redis = await RedisServer.start();
  const env = hostEnv({ ANTHROPIC_BASE_URL: emulator.current.url });
  for (let i = 0; i < 2; i++)
    hosts.push((await startHost(redis.url, ['--threads', '1', '--allow', 'read_file,bash'], env)).proc);
});

afterAll(async () => {
  for (const host of hosts) await host.kill();
  await redis?.kill();
});

describe.skipIf(!HAVE_REDIS)(`Redis restarted empty mid-run (needs ${REDIS_SERVER})`, () => {
  // The probe of issue 25: the hosts completed the forks while Redis was away, Redis came back
  // empty, and the submitter, whose jobs were gone, called them "cancelled after 0 turns".
  it('forks the hosts finished while Redis was away are completed, from their transcripts, not guessed; a running one is stopped on its host', async () => {
    const ws = workspace({});
    const engine = await submitter(emulator.current.url, redis.url, {
      workspace: ws,
      runDir: workspace({}),
      allow: ['bash'],
      // no shared budget: the hosts' requests need no Redis; a long timeout: only the restart ends the run
      admission: 'off',
      distributed: { redisTimeoutMs: 600_000 },
    });
    try {
      const fan = engine.fanOut(bigSnapshot(`restart-${Date.now()}`), [HOLD, HOLD, HOLD, HOLD.replace('go', 'later')]);
      const holding = new Set<string>();
      let done: Promise<void> | undefined;
      for await (const e of fan) {
        if (e.type === 'turn-end') holding.add(e.forkId);
        if (!done && holding.size === 4) {
          done = (async () => {
            await redis.kill();
            writeFileSync(join(ws, 'go'), ''); // the forks finish on their hosts, Redis away
            const paths = fan.forks
              .slice(0, 3)
              .map((f) => transcriptPath(join(engine.options.runsDir!, fan.id), f.forkId));
            await until(() => paths.every((p) => records(p).some((r) => r.type === 'end' && r.status === 'completed')));
            await redis.restart();
          })();
        }
      }
      await done;
      const { forks, summary } = await fan.settled();
      expect(forks.map((f) => [f.status, f.turns, f.error?.code])).toEqual([
        ['completed', 2, undefined],
        ['completed', 2, undefined],
        ['completed', 2, undefined],
        ['failed', 1, 'REDIS_LOST'],
      ]);
      expect(forks[3]!.error!.message).toMatch(/restarted without its data: 4 job\(s\) of this run are gone/);
      expect(summary.requests).toBe(7); // the turns done while Redis was away are in the ledger
      // the host of the fourth stopped it: its job is gone, and a resume must not run beside it
      await until(() => records(forks[3]!.transcriptPath!).some((r) => r.type === 'end'));
      expect(records(forks[3]!.transcriptPath!).at(-1)).toMatchObject({ type: 'end', status: 'cancelled' });
      expect(hosts.map((h) => h.stderr).join('')).toMatch(/restarted without 1 running job\(s\): stopping them/);
    } finally {
      await engine.close();
    }
  });
});
