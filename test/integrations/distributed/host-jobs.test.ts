import { existsSync, mkdtempSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Job, Queue, QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ranKey } from '../../../src/integrations/distributed/keys.ts';
import { hostSandboxLines } from '../../../src/cli/distributed-run.ts';
import { findBubblewrap } from '../../../src/core/tools/sandbox/bwrap-probe.ts';
import { bigSnapshot, sharedEmulator, workspace } from '../../core/engine/helpers.ts';
import { sharedHostService } from '../../security/host-service.ts';
import { HAVE_REDIS, hostEnv, type Proc, records, REDIS_SERVER, RedisServer, startHost, submitter } from './cluster.ts';

// Issue 33's attackers: a submitter's job asking a host for more than it allows (a check on a
// host without bash, limits above its ceilings), a host without bubblewrap, and whoever can
// write to Redis without the secret, replaying a job that ran. The host's key is a canary.
const HOST_KEY = 'sk-ant-host-canary-33aa7c1e9b';
const HAVE_BWRAP = findBubblewrap() !== undefined;

let redis: RedisServer;
const hosts: Record<string, { proc: Proc; hostId: string }> = {};
const emulator = sharedEmulator({ script: 'refactor' });
const clients: { close(): Promise<unknown> }[] = [];
const service = sharedHostService();

/** A PATH with every program of this machine but bubblewrap: a host where it is not installed. */
function pathWithoutBwrap(): string {
  const dir = mkdtempSync(join(tmpdir(), 'fc-no-bwrap-'));
  for (const from of ['/usr/local/bin', '/usr/bin', '/bin'])
    for (const name of existsSync(from) ? readdirSync(from) : [])
      if (name !== 'bwrap' && !existsSync(join(dir, name))) symlinkSync(join(from, name), join(dir, name));
  return dir;
}

beforeAll(async () => {
  if (!HAVE_REDIS) return;
  redis = await RedisServer.start();
  const env = hostEnv({ ANTHROPIC_BASE_URL: emulator.current.url, ANTHROPIC_API_KEY: HOST_KEY });
  const noBwrap = { ...env, PATH: pathWithoutBwrap() };
  const start = (queue: string, args: string[], e: NodeJS.ProcessEnv) =>
    startHost(redis.url, ['--threads', '1', '--queue', queue, ...args], e);
  const [fileTools, auto, none, bash, network] = await Promise.all([
    start('q-default', [], env),
    start('q-no-bwrap', ['--allow', 'read_file,bash'], noBwrap),
    start('q-none', ['--allow', 'read_file,bash', '--sandbox', 'none'], noBwrap),
    start('q-bash', ['--allow', 'read_file,bash', '--ceiling', 'tools.limits.bashTmpMb=64'], env),
    start('q-network', ['--allow', 'read_file,bash', '--allow-network'], env),
  ]);
  Object.assign(hosts, { fileTools, auto, none, bash, network });
});

afterAll(async () => {
  for (const client of clients) await client.close();
  for (const host of Object.values(hosts)) await host.proc.kill();
  await redis?.kill();
});

function engine(
  queue: string,
  ws: string,
  more: Parameters<typeof submitter>[2] extends infer O ? Partial<O> : never = {},
) {
  return submitter(emulator.current.url, redis.url, {
    apiKey: 'submitter-key',
    workspace: ws,
    runDir: workspace({}),
    concurrency: 1,
    warm: 'none',
    ...more,
    distributed: { queue },
  });
}

describe.skipIf(!HAVE_REDIS)(`a host's policy covers every field of a job (needs ${REDIS_SERVER})`, () => {
  it("a default-policy host (file tools only) runs no command a job names: the job's check is refused, nothing is sent", async () => {
    const ws = workspace({ 'a.ts': 'export const a = 1;\n' });
    const fc = await engine('q-default', ws, { allow: ['read_file'] });
    try {
      const requests = emulator.current.stats().requests.messages;
      const { forks } = await fc
        .fanOut(bigSnapshot(`check-${Date.now()}`), ['read a.ts and report'], {
          check: { command: 'env > leaked; touch checked' },
        })
        .settled();
      expect(forks[0]).toMatchObject({ status: 'failed', turns: 0, error: { code: 'JOB_POLICY_REFUSED' } });
      expect(forks[0]!.error!.message).toMatch(
        /loop\.check\.command: the job's check `env > leaked; touch checked` is not run: this host does not allow bash/,
      );
      expect(existsSync(join(ws, 'checked'))).toBe(false);
      expect(existsSync(join(ws, 'leaked'))).toBe(false);
      expect(emulator.current.stats().requests.messages).toBe(requests); // the host sent nothing
      expect(hosts['fileTools']!.proc.stdout).toMatch(/bash: not allowed on this host/);
    } finally {
      await fc.close();
    }
  });

  it('a host without bubblewrap (sandbox auto) says so at start and refuses bash: the fork never reads its key', async () => {
    expect(hosts['auto']!.proc.stdout).toMatch(
      /bash is NOT sandboxed on this host \(bubblewrap is not installed\): jobs that run bash or a check are refused; .*--sandbox none/,
    );
    const ws = workspace({});
    const fc = await engine('q-no-bwrap', ws);
    try {
      const { forks } = await fc
        .fanOut(bigSnapshot(`no-bwrap-${Date.now()}`), ['run `env > leaked` and report'])
        .settled();
      expect(forks[0]).toMatchObject({ status: 'failed', turns: 0, error: { code: 'JOB_POLICY_REFUSED' } });
      expect(forks[0]!.error!.message).toMatch(/tools\.allow: bash: bash is NOT sandboxed on this host/);
      expect(existsSync(join(ws, 'leaked'))).toBe(false);
    } finally {
      await fc.close();
    }
  });

  it("the submitter's summary shows the host's sandbox, not its own: a host run with --sandbox none is named unsandboxed", async () => {
    expect(hosts['none']!.proc.stdout).toMatch(
      /bash is NOT sandboxed on this host \(--sandbox none; bubblewrap is not installed\)/,
    );
    const fc = await engine('q-none', workspace({}));
    try {
      const result = await fc.fanOut(bigSnapshot(`none-${Date.now()}`), ['run `true` and report']).settled();
      const hostId = hosts['none']!.hostId;
      expect(result.forks[0]!.status).toBe('completed');
      expect(result.summary.sandbox).toBeUndefined(); // this machine's probe says nothing of the hosts
      expect(result.summary.host_sandboxes?.[hostId]).toMatchObject({ kind: 'none' });
      expect(result.summary.fork_results[0]!.host).toEqual({ id: hostId, sandbox: 'none', clamped: [] });
      expect(hostSandboxLines(result)).toEqual([
        expect.stringMatching(
          new RegExp(`^host ${hostId}: bash is NOT sandboxed on that host \\(bubblewrap is not installed\\)`),
        ),
      ]);
    } finally {
      await fc.close();
    }
  });

  it.skipIf(!HAVE_BWRAP)(
    "limits above the host's ceiling are clamped, said in the fork's host report, and hold in the sandbox",
    async () => {
      const fc = await engine('q-bash', workspace({}), { toolLimits: { bashTmpMb: 60_000 } });
      try {
        const result = await fc
          .fanOut(bigSnapshot(`ceiling-${Date.now()}`), ['run `df -k /tmp | tail -1` and report'])
          .settled();
        const fork = result.forks[0]!;
        expect(fork.status).toBe('completed');
        expect(fork.host).toMatchObject({ id: hosts['bash']!.hostId, clamped: ['tools.limits.bashTmpMb: 60000 → 64'] });
        expect(fork.host!.sandbox!.applied).toContain('/tmp 64 MiB');
        const output = records(fork.transcriptPath!).find((r) => r.type === 'tool-end') as { content?: string };
        expect(output.content).toMatch(/\b65536\b/); // 64 MiB in 1K blocks, not 60000 MiB
        expect(hosts['bash']!.proc.stderr).toMatch(
          /clamped to this host's ceilings: tools\.limits\.bashTmpMb: 60000 → 64/,
        );
        expect(hostSandboxLines(result).join('\n')).toMatch(/clamped to its ceilings: tools\.limits\.bashTmpMb/);
      } finally {
        await fc.close();
      }
    },
  );
});

describe.skipIf(!HAVE_REDIS || !HAVE_BWRAP)(`a tool flag on a host (needs ${REDIS_SERVER} and bubblewrap)`, () => {
  // the engine's `network` travels in the signed job (tools.network), through the host's rule
  // (`forkcache worker --allow-network`) into the host's task and its fork's sandbox
  const curl = () => `run \`curl -s -m 10 http://127.0.0.1:${service.port}/ || echo NO-NETWORK\` and report`;

  it('a job turning network on reaches the network only on a host started with --allow-network', async () => {
    expect(hosts['network']!.proc.stdout).toMatch(/policy: .*network allowed/);
    expect(hosts['bash']!.proc.stdout).toMatch(/policy: .*network refused/);
    const allowed = await engine('q-network', workspace({}), { allow: ['bash'], network: true });
    try {
      const { forks } = await allowed.fanOut(bigSnapshot(`net-on-${Date.now()}`), [curl()]).settled();
      expect(forks[0]!.status).toBe('completed');
      expect(forks[0]!.host).toMatchObject({ id: hosts['network']!.hostId, sandbox: { kind: 'bwrap', network: true } });
      expect(readFileSync(forks[0]!.transcriptPath!, 'utf8')).toContain('host service');
    } finally {
      await allowed.close();
    }
    const refused = await engine('q-bash', workspace({}), { allow: ['bash'], network: true });
    try {
      const { forks } = await refused.fanOut(bigSnapshot(`net-refused-${Date.now()}`), [curl()]).settled();
      expect(forks[0]).toMatchObject({ status: 'failed', turns: 0, error: { code: 'JOB_POLICY_REFUSED' } });
      expect(forks[0]!.error!.message).toMatch(
        /tools\.network: the job turns network on .*this host does not allow it/,
      );
    } finally {
      await refused.close();
    }
    // network off (the default): the host that allows it still gives the fork none
    const off = await engine('q-network', workspace({}), { allow: ['bash'] });
    try {
      const { forks } = await off.fanOut(bigSnapshot(`net-off-${Date.now()}`), [curl()]).settled();
      expect(forks[0]!.host).toMatchObject({ sandbox: { kind: 'bwrap', network: false } });
      expect(readFileSync(forks[0]!.transcriptPath!, 'utf8')).toContain('NO-NETWORK');
    } finally {
      await off.close();
    }
  });
});

describe.skipIf(!HAVE_REDIS || !HAVE_BWRAP)(`a job runs at most once (needs ${REDIS_SERVER})`, () => {
  it('a finished job and a finished `resume --retry` job re-queued unchanged run nothing, the run key deleted too', async () => {
    const ws = workspace({});
    const fc = await engine('q-bash', ws);
    const queue = new Queue('q-bash', { connection: { url: redis.url } });
    const events = new QueueEvents('q-bash', { connection: { url: redis.url } });
    clients.push(queue, events);
    const raw = new Redis(redis.url);
    const ran = (): number => readFileSync(join(ws, 'count'), 'utf8').split('\n').filter(Boolean).length;
    const replay = async (job: Job): Promise<string> => {
      await job.remove();
      const again = await queue.add('fork', job.data, { jobId: job.id! });
      return again.waitUntilFinished(events).then(
        () => 'completed',
        (err: Error) => err.message,
      );
    };
    try {
      // the command fails, so the fork ends not_done: retryable
      const fan = fc.fanOut(bigSnapshot(`replay-${Date.now()}`), ['run `echo ran >> count; false` and report']);
      const { forks, summary } = await fan.settled();
      expect(forks[0]!.status).toBe('not_done');
      const transcript = forks[0]!.transcriptPath!;
      const ends = (): number => records(transcript).filter((r) => r.type === 'end').length;
      expect([ran(), ends()]).toEqual([1, 1]);
      const jobsOf = async (): Promise<Job[]> =>
        (await queue.getCompleted()).filter((j) => j.id!.startsWith(`${forks[0]!.forkId}.`));
      const [first] = await jobsOf();
      expect(await replay(first!)).toMatch(/JOB_REPLAYED: job .* ran already \(Redis records that it ran\)/);
      expect([ran(), ends()]).toEqual([1, 1]);

      const retried = await fc.resume(summary.run_dir!, { retry: ['not_done'] }).settled();
      expect(retried.forks[0]!.status).toBe('not_done');
      expect([ran(), ends()]).toEqual([2, 2]);
      const retry = (await jobsOf()).find((j) => j.id !== first!.id)!;
      expect(JSON.parse((retry.data as { body: string }).body)).toHaveProperty('prompt');
      expect(await replay(retry)).toMatch(/JOB_REPLAYED: job .* ran already \(Redis records that it ran\)/);
      expect([ran(), ends()]).toEqual([2, 2]);

      // the attacker erases what Redis records: the transcript still names the job in its end
      const again = (await queue.getFailed()).find((j) => j.id === retry.id)!;
      await raw.del(ranKey('q-bash', retry.id!));
      expect(await replay(again)).toMatch(/JOB_REPLAYED: .*its fork's transcript ended it already/);
      expect([ran(), ends()]).toEqual([2, 2]);
      expect(hosts['bash']!.proc.stderr).toMatch(/refused job .*JOB_REPLAYED/);
    } finally {
      raw.disconnect();
      await fc.close();
    }
  });
});
