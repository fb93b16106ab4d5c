import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ForkEngine } from '../../../src/core/engine/engine.ts';
import { type Emulator, startEmulator } from '../../../src/integrations/emulator/start.ts';
import { formatReport } from '../../../src/integrations/emulator/scripts/directive.ts';
import type { ScriptedModel } from '../../../src/integrations/emulator/scripts/types.ts';
import { bigSnapshot, workspace } from '../../core/engine/helpers.ts';
import { HAVE_REDIS, hostEnv, type Proc, REDIS_SERVER, RedisServer, startHost, TEST_JOB_SECRET } from './cluster.ts';

const DIRECTIVES = ['read a.ts and report', 'read b.ts and report', 'read c.ts and report', 'read d.ts and report'];

let redis: RedisServer;
let emulator: Emulator;
let slow: Emulator;
const hosts = new Map<string, Proc>();

/** One short final answer: one turn per fork, a few tokens streamed. */
const brief: ScriptedModel = {
  name: 'brief',
  respond: () => ({
    content: [
      { type: 'text', text: formatReport({ scope: 'a', result: 'done', keyFiles: [], filesChanged: [], issues: [] }) },
    ],
    stop_reason: 'end_turn',
  }),
};

beforeAll(async () => {
  if (!HAVE_REDIS) return;
  emulator = await startEmulator({ api: 'dashscope', script: 'refactor', latency: 'off' });
  // DashScope's rule: a cache entry is readable once the response that wrote it is complete.
  // Output streams at 5 tokens a second here, so a sibling released at its first chunk would
  // miss it; the fan-out's warm-up (one output token) fails, so the first child warms on a host.
  slow = await startEmulator({
    api: 'dashscope',
    script: brief,
    latency: { baseMs: 0, prefillMsPerToken: 0, cacheReadMsPerToken: 0, outputTokensPerSecond: 5 },
    faultFor: (body) => ((body as { max_tokens?: number }).max_tokens === 1 ? '500' : 'none'),
  });
  redis = await RedisServer.start();
  // a host serves its own endpoint only: two hosts for the first emulator, one for the slow one
  for (const target of [emulator, slow]) {
    const env = hostEnv({ DASHSCOPE_BASE_URL: `${target.url}/v1`, DASHSCOPE_API_KEY: 'host-ds-key' });
    for (let i = 0; i < (target === slow ? 1 : 2); i++) {
      const host = await startHost(redis.url, ['--threads', '1', '--queue', queueOf(target)], env);
      hosts.set(host.hostId, host.proc);
    }
  }
});

afterAll(async () => {
  for (const host of hosts.values()) await host.kill();
  await redis?.kill();
  await emulator?.close();
  await slow?.close();
});

const queueOf = (target: Emulator): string => (target === slow ? 'ds-slow' : 'ds');

async function fanOut(target: Emulator, tag: string) {
  const engine = await ForkEngine.create({
    provider: 'dashscope',
    layout: 'qwen',
    baseURL: `${target.url}/v1`,
    apiKey: 'submitter-ds-key',
    // every directive's file is there: a fork that cannot do its directive is not done (issue 23)
    workspace: workspace(Object.fromEntries(['a', 'b', 'c', 'd'].map((n) => [`${n}.ts`, `export const ${n} = 1;\n`]))),
    runDir: workspace({}),
    concurrency: 4,
    distributed: { redis: redis.url, secret: TEST_JOB_SECRET, queue: queueOf(target) },
  });
  try {
    const fan = engine.fanOut(bigSnapshot(`${tag}-${Date.now()}:`), DIRECTIVES);
    const servedBy = new Set<string>();
    for await (const e of fan) if (e.type === 'fork-host') servedBy.add(e.hostId);
    return { ...(await fan.settled()), servedBy };
  } finally {
    await engine.close();
  }
}

describe.skipIf(!HAVE_REDIS)(`distributed Chat Completions forks (DashScope emulator; needs ${REDIS_SERVER})`, () => {
  it('a DashScope fan-out runs on two hosts, and every child reads the whole shared prefix', async () => {
    const { forks, summary, servedBy } = await fanOut(emulator, 'dist-ds');
    expect(forks.map((f) => f.status)).toEqual(['completed', 'completed', 'completed', 'completed']);
    expect(servedBy.size).toBe(2);
    const shared = summary.prefix.shared_tokens!;
    expect(shared).toBeGreaterThan(3000);
    for (const fork of forks) expect(fork.requests[0]!.usage.cache_read_input_tokens).toBe(shared);
    expect(summary.cache.cache_efficiency).toBeGreaterThanOrEqual(0.99);
    expect(summary.warmups).toBe(1);
  });

  it("the warm-first barrier keeps DashScope's rule on the hosts: siblings of a first child that warms wait for its response to complete", async () => {
    const { forks } = await fanOut(slow, 'dist-ds-barrier');
    expect(forks.map((f) => f.status)).toEqual(['completed', 'completed', 'completed', 'completed']);
    const first = forks.map((f) => f.requests[0]!.usage);
    const warmers = first.filter((u) => u.cache_read_input_tokens === 0);
    expect(warmers).toHaveLength(1); // one child wrote the prefix...
    const reads = first.filter((u) => u.cache_read_input_tokens > 0).map((u) => u.cache_read_input_tokens);
    expect(reads).toHaveLength(3); // ...and each sibling read all of it
    expect(new Set(reads).size).toBe(1);
    expect(reads[0]).toBeGreaterThan(3000);
  });
});
