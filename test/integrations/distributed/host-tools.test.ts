import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { captureSnapshot } from '../../../src/core/fork/snapshot.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyHostPolicy } from '../../../src/integrations/distributed/host/policy.ts';
import type { ForkJobData } from '../../../src/integrations/distributed/keys.ts';
import { sharedEmulator, workspace } from '../../core/engine/helpers.ts';
import { hostParent } from '../../core/engine/host-parent.ts';
import { HAVE_REDIS, hostEnv, type Proc, REDIS_SERVER, RedisServer, startHost, submitter } from './cluster.ts';

const emulator = sharedEmulator({ script: 'host-tools' });
let redis: RedisServer;
let host: Proc | undefined;

beforeAll(async () => {
  if (!HAVE_REDIS) return;
  redis = await RedisServer.start();
  const env = hostEnv({ ANTHROPIC_BASE_URL: emulator.current.url });
  host = (await startHost(redis.url, ['--threads', '1', '--host-tools', 'test/fixtures/host-tools/tools.mjs'], env))
    .proc;
});

afterAll(async () => {
  await host?.kill();
  await redis?.kill();
});

const job = (hostTools: string[]): ForkJobData => ({
  v: 1,
  fanoutId: 'fo001-x',
  forkId: 'fo001-x-f01',
  index: 0,
  prefixSha256: 'a'.repeat(64),
  base: { tailBlocks: [], messages: [] },
  api: { provider: 'anthropic', baseURL: 'http://127.0.0.1:4000', headers: {}, maxRetries: 0, timeoutMs: 1000 },
  loop: { maxTurns: 4, maxTokens: 100, querySource: 'x', marker: '5m', retry: { retries: 0, baseMs: 0, maxMs: 0 } },
  tools: { workspace: '/tmp', allow: ['read_file'], limits: {}, sandbox: 'auto', host: hostTools },
  permissions: {},
  transcriptPath: undefined,
});

describe('host tools on a distributed host', () => {
  it('a job whose forks call tools the host has not registered is refused, naming them', () => {
    const policy = {
      baseURL: 'http://127.0.0.1:4000',
      registeredTools: [{ name: 'search_tickets', readOnly: true }],
    };
    expect(() => applyHostPolicy(job(['search_tickets', 'add_comment', 'lookup_user']), policy)).toThrow(
      /^tools\.host: the job's forks call the host tools add_comment, lookup_user, which this host does not run/,
    );
    expect(applyHostPolicy(job(['search_tickets']), policy).tools.host).toEqual([
      { name: 'search_tickets', readOnly: true },
    ]);
  });

  it.skipIf(!HAVE_REDIS)(
    `runs the forks' host tools from the module the host loaded (needs ${REDIS_SERVER})`,
    async () => {
      const engine = await submitter(emulator.current.url, redis.url, {
        workspace: workspace(),
        runDir: workspace({}),
        allow: ['read_file'],
        // the submitter names the tools its forks call; the host's module runs them
        hostTools: {
          search_tickets: { readOnly: true, execute: () => 'not here' },
          lookup_user: { readOnly: true, execute: () => 'not here' },
          add_comment: { execute: () => 'not here' },
        },
      });
      try {
        const fan = engine.fanOut(hostParent(`dist-host-${Date.now()}`), ['triage area 1', 'triage area 2']);
        const { forks } = await fan.settled();
        expect(forks.map((f) => f.status)).toEqual(['completed', 'completed']);
        for (const fork of forks) {
          const ends = readFileSync(fork.transcriptPath!, 'utf8')
            .trim()
            .split('\n')
            .map((l) => JSON.parse(l) as { type: string; content?: string })
            .filter((r) => r.type === 'tool-end')
            .map((r) => r.content);
          expect(ends).toEqual([
            `T-17 ${fork.directive}: login fails (searched on the host)`,
            `user ${fork.directive}: plan pro`,
            `comment added to ${fork.directive} by ${fork.forkId}`,
          ]);
        }
      } finally {
        await engine.close();
      }
    },
  );

  it.skipIf(!HAVE_REDIS)(
    "a Claude Code parent is refused before anything is sent: the hosts run forkcache's own tools only",
    async () => {
      const recorded = JSON.parse(
        readFileSync(join(import.meta.dirname, '../../fixtures/claude-code/2.1.332/fork-fanout/wire/04.json'), 'utf8'),
      ) as { body: Parameters<typeof captureSnapshot>[0] };
      const engine = await submitter(emulator.current.url, redis.url, {
        workspace: workspace(),
        runDir: workspace({}),
      });
      const before = emulator.current.stats().requests.total;
      try {
        expect(() => engine.fanOut(captureSnapshot(recorded.body), ['read notes.txt and report'])).toThrow(
          expect.objectContaining({
            code: 'TOOLS_UNRUNNABLE',
            message: expect.stringMatching(/claude-code's tools, which forkcache worker hosts do not run yet/),
          }),
        );
        expect(emulator.current.stats().requests.total).toBe(before);
      } finally {
        await engine.close();
      }
    },
  );
});
