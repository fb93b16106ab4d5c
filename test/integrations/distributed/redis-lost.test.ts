import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ForkEngine } from '../../../src/core/engine/engine.ts';
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

// Small bounds for the test (the defaults are 30 s): the run and the hosts give Redis 1.5 s.
const TIMEOUT_MS = 1500;

let redis: RedisServer;
const hosts: Proc[] = [];
const emulator = sharedEmulator({ script: 'refactor' });

beforeAll(async () => {
  if (!HAVE_REDIS) return;
  redis = await RedisServer.start();
  const env = hostEnv({ ANTHROPIC_BASE_URL: emulator.current.url });
  const args = ['--threads', '1', '--allow', 'read_file,bash', '--redis-timeout-ms', String(TIMEOUT_MS)];
  for (let i = 0; i < 2; i++) hosts.push((await startHost(redis.url, args, env)).proc);
});

afterAll(async () => {
  for (const host of hosts) await host.kill();
  await redis?.kill();
});

const engineOn = (ws: string, runDir: string): Promise<ForkEngine> =>
  submitter(emulator.current.url, redis.url, { workspace: ws, runDir, distributed: { redisTimeoutMs: TIMEOUT_MS } });

describe.skipIf(!HAVE_REDIS)(`a lost Redis (needs ${REDIS_SERVER})`, () => {
  it('redis-server killed mid-run: the run ends naming Redis, each fork as its transcript says; restarted empty, resume finishes the rest', async () => {
    const ws = workspace({ 'a.ts': 'export const a = 1;\n', 'b.ts': 'export const b = 2;\n' });
    const runDir = workspace({});
    const engine = await engineOn(ws, runDir);
    let result: Awaited<ReturnType<ReturnType<ForkEngine['fanOut']>['settled']>>;
    try {
      const fan = engine.fanOut(bigSnapshot(`lost-${Date.now()}`), [
        'read a.ts and report',
        'read b.ts and report',
        HOLD,
        HOLD,
      ]);
      const completed = new Set<string>();
      const holding = new Set<string>();
      let killed = false;
      for await (const e of fan) {
        if (e.type === 'fork-end' && e.status === 'completed') completed.add(e.forkId);
        if (e.type === 'turn-end' && (e.forkId === fan.forks[2]!.forkId || e.forkId === fan.forks[3]!.forkId))
          holding.add(e.forkId);
        if (!killed && completed.size === 2 && holding.size === 2) {
          killed = true; // two forks done, two in their bash call: Redis goes away for good
          await redis.kill();
        }
      }
      result = await fan.settled();
    } finally {
      await engine.close();
    }
    const [a, b, c, d] = result.forks;
    expect([a!.status, b!.status]).toEqual(['completed', 'completed']);
    for (const fork of [c!, d!]) {
      expect(fork).toMatchObject({ status: 'failed', turns: 1, error: { code: 'REDIS_LOST' } });
      expect(fork.error!.message).toMatch(
        /^Redis at redis:\/\/127\.0\.0\.1:\d+ has not answered for [\d.]+ s \(the limit is 1\.5 s\)/,
      );
    }
    expect(result.summary.requests).toBe(6); // every request the hosts made, the lost forks' included
    // every host noticed, and stopped its copy of the forks (never to race a resume)
    for (const host of hosts) await host.line(/has not answered for/, 'stderr');
    await until(() => [c!, d!].every((f) => records(f.transcriptPath!).some((r) => r.type === 'end')));
    const before = [a!, b!].map((f) => readFileSync(f.transcriptPath!, 'utf8'));

    await redis.restart(); // empty: no persistence
    for (const host of hosts) await host.line(/answers again: serving/, 'stderr');
    writeFileSync(join(ws, 'go'), '');
    const again = await engineOn(ws, runDir);
    try {
      const resumed = await again.resume(join(runDir, result.fanOutId)).settled();
      // the held commands were stopped with the hosts' copies: their effect is unknown, the model
      // says so, and those forks are not done (issue 23); nothing is run twice behind its back
      expect(resumed.forks.map((f) => f.status)).toEqual(['completed', 'completed', 'not_done', 'not_done']);
      expect([a!, b!].map((f) => readFileSync(f.transcriptPath!, 'utf8'))).toEqual(before); // not run again
      for (const fork of [c!, d!]) {
        const lines = records(fork.transcriptPath!);
        expect(lines.filter((l) => l.type === 'turn').map((l) => l.turn)).toEqual([1, 2]); // no turn twice
        expect(lines.filter((l) => l.type === 'end').at(-1)).toMatchObject({ status: 'not_done' });
        expect(lines.filter((l) => l.type === 'tool-start')).toHaveLength(1); // the command was not repeated
      }
    } finally {
      await again.close();
    }
  });
});
