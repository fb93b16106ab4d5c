import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOOL_DECLARATIONS } from '../../../src/core/tools/declarations.ts';
import { sharedEmulator } from '../../core/engine/helpers.ts';
import { HAVE_REDIS, hostEnv, Proc, REDIS_SERVER, RedisServer, ROOT, startHost, until, HOLD } from './cluster.ts';
import { cliArgs } from '../../cli/run-cli.ts';

const emulator = sharedEmulator({ script: 'refactor' });
let redis: RedisServer;
let locked: RedisServer;
let host: Proc;

beforeAll(async () => {
  if (!HAVE_REDIS) return;
  [redis, locked] = await Promise.all([RedisServer.start(), RedisServer.start(['--requirepass', 'right-password'])]);
  const env = hostEnv({ ANTHROPIC_BASE_URL: emulator.current.url });
  host = (await startHost(redis.url, ['--threads', '1', '--allow', 'bash', '--redis-timeout-ms', '1500'], env)).proc;
});

afterAll(async () => {
  await host?.kill();
  await Promise.all([redis?.kill(), locked?.kill()]);
});

/** `forkcache …` as a child process, with the submitter's environment: the external emulator, a key, the secret. */
function forkcache(args: string[], env: NodeJS.ProcessEnv = {}): Proc {
  return new Proc(
    process.execPath,
    [...cliArgs(), ...args],
    hostEnv({ ANTHROPIC_BASE_URL: emulator.current.url, ANTHROPIC_API_KEY: 'test', ...env }),
  );
}

function plan(directives: string[]): { dir: string; path: string; runs: string } {
  const dir = mkdtempSync(join(tmpdir(), 'fc-dist-cli-'));
  const parent = {
    ...(JSON.parse(readFileSync(join(ROOT, 'examples/plan/parent.json'), 'utf8')) as Record<string, unknown>),
    tools: TOOL_DECLARATIONS,
  };
  const path = join(dir, 'plan.json');
  writeFileSync(path, JSON.stringify({ parent, directives, workspace: '.', runDir: 'runs', allow: ['bash'] }));
  return { dir, path, runs: join(dir, 'runs') };
}

/** Every transcript line of the run so far. */
function lines(runs: string): string[] {
  if (!existsSync(runs)) return [];
  return readdirSync(runs).flatMap((fan) =>
    existsSync(join(runs, fan, 'forks'))
      ? readdirSync(join(runs, fan, 'forks')).flatMap((f) =>
          readFileSync(join(runs, fan, 'forks', f), 'utf8').split('\n'),
        )
      : [],
  );
}

describe.skipIf(!HAVE_REDIS)(`the CLI with a lost Redis (needs ${REDIS_SERVER})`, () => {
  it('a `forkcache worker` with a wrong password, or none, exits 2 naming the credentials (it used to retry forever)', async () => {
    const wrong = forkcache(['worker', '--redis', `redis://:wrong-password@127.0.0.1:${locked.port}`]);
    const none = forkcache(['worker', '--redis', locked.url]);
    const unsigned = forkcache(['worker', '--redis', redis.url], { FORKCACHE_JOB_SECRET: '' });
    const unsignedRun = forkcache(
      ['run', plan(['run `true` and report']).path, '--redis', redis.url, '--api', 'real'],
      {
        FORKCACHE_JOB_SECRET: '',
      },
    );
    const embedded = forkcache([
      'run',
      plan(['run `true` and report']).path,
      '--redis',
      redis.url,
      '--api',
      'emulator',
    ]);
    const ceiling = forkcache(['worker', '--redis', redis.url, '--ceiling', 'tools.limits.bashNice=1']);
    expect(await Promise.all([wrong, none, unsigned, unsignedRun, embedded, ceiling].map((p) => p.exited))).toEqual([
      2, 2, 2, 2, 2, 2,
    ]);
    expect(ceiling.stderr).toMatch(/--ceiling: expected PATH=N with PATH among .*tools\.limits\.bashTmpMb/);
    expect(wrong.stderr).toMatch(/redis:\/\/127\.0\.0\.1:\d+ refused the credentials \(WRONGPASS/);
    expect(wrong.stderr).not.toContain('wrong-password');
    expect(wrong.stderr).not.toContain('retrying');
    expect(none.stderr).toMatch(/refused the credentials \(NOAUTH/);
    for (const p of [unsigned, unsignedRun])
      expect(p.stderr).toMatch(/set FORKCACHE_JOB_SECRET to the same secret on the submitter and every host/);
    expect(embedded.stderr).toMatch(/--redis: worker hosts send requests only to their own endpoint/);
  });

  it('Redis killed mid-run: `run` exits 1 naming Redis with the resume command; Redis back, `resume --redis` ends it and `--retry not_done` finishes the held fork', async () => {
    const { dir, path, runs } = plan(['run `true` and report', HOLD]);
    const run = forkcache(['run', path, '--api', 'real', '--redis', redis.url, '--redis-timeout-ms', '1500']);
    await until(() => lines(runs).some((l) => l.includes('"tool-start"') && l.includes('while')));
    await until(() => lines(runs).some((l) => l.includes('"type":"end"') && l.includes('"completed"')));
    await redis.kill();
    expect(await run.exited).toBe(1);
    const said =
      /forkcache: Redis at (redis:\/\/127\.0\.0\.1:\d+) has not answered for .*: 1 fork\(s\) not done; continue with: forkcache resume (\S+) --redis (\S+)/.exec(
        run.stderr,
      );
    expect(said, run.stderr).not.toBeNull();
    expect(said![3]).toBe(redis.url);

    await redis.restart();
    await host.line(/answers again: serving/, 'stderr');
    writeFileSync(join(dir, 'go'), '');
    const resume = forkcache(['resume', said![2]!, '--api', 'real', '--redis', redis.url, '--json']);
    // the held command was stopped with its host's copy of the fork: its effect is unknown, the
    // model says so, and the fork is not done (issue 23) — never run again behind its back
    expect(await resume.exited, resume.stderr).toBe(1);
    const statuses = (out: string): string[] =>
      (JSON.parse(out.trim().split('\n').at(-1)!) as { fork_results: { status: string }[] }).fork_results.map(
        (f) => f.status,
      );
    expect(statuses(resume.stdout)).toEqual(['completed', 'not_done']);
    // retrying what was not done finishes the run, on the hosts again
    const retry = forkcache([
      'resume',
      said![2]!,
      '--api',
      'real',
      '--redis',
      redis.url,
      '--retry',
      'not_done',
      '--json',
    ]);
    expect(await retry.exited, retry.stderr).toBe(0);
    expect(statuses(retry.stdout)).toEqual(['completed', 'completed']);
    // the sandbox said is the host's own report, never this machine's probe (issue 33)
    for (const out of [run.stderr, retry.stderr])
      expect(out).toMatch(/^bash sandbox: each worker host applies its own, probed there/m);
    expect(retry.stderr).toMatch(/^host \S+: (bash sandbox: bubblewrap: |bash is NOT sandboxed on that host)/m);
    expect(retry.stderr).not.toMatch(/^bash sandbox: bubblewrap:/m);
  });

  it('Ctrl-C while Redis is frozen (connected, answering nothing): exit 130, and each fork says its cancel was not confirmed', async () => {
    await until(() => !/has not answered(?![\s\S]*answers again)/.test(host.stderr));
    const { path, runs } = plan([HOLD, HOLD]);
    // a Redis timeout longer than the test: the run never declares Redis lost, its cancels wait
    const run = forkcache([
      'run',
      path,
      '--api',
      'real',
      '--redis',
      redis.url,
      '--redis-timeout-ms',
      '600000',
      '--json',
    ]);
    await until(() => lines(runs).filter((l) => l.includes('"tool-start"')).length === 2);
    const pid = redis.proc!.child.pid!;
    process.kill(pid, 'SIGSTOP');
    try {
      run.child.kill('SIGINT');
      expect(await run.exited, run.stderr).toBe(130);
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    const summary = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as {
      fork_results: { status: string; error?: { message: string } }[];
    };
    expect(summary.fork_results.map((f) => f.status)).toEqual(['cancelled', 'cancelled']);
    for (const fork of summary.fork_results)
      expect(fork.error!.message).toMatch(/Redis did not confirm the cancel: its host may not have been told/);
    await host.line(/answers again: serving/, 'stderr');
  });

  it('Ctrl-C while Redis is down ends with exit 130 and the --json summary (it used to exit 13, with none)', async () => {
    // the host serves (after the test before, once it found Redis back)
    await until(() => !/has not answered(?![\s\S]*answers again)/.test(host.stderr));
    const { path, runs } = plan([HOLD, HOLD]);
    const run = forkcache(['run', path, '--api', 'real', '--redis', redis.url, '--json']);
    await until(() => lines(runs).filter((l) => l.includes('"tool-start"')).length === 2);
    await redis.kill();
    run.child.kill('SIGINT');
    expect(await run.exited, run.stderr).toBe(130);
    const summary = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as {
      interrupted: boolean;
      fork_results: { status: string; error?: { message: string } }[];
    };
    expect(summary.interrupted).toBe(true);
    expect(summary.fork_results.map((f) => f.status)).toEqual(['cancelled', 'cancelled']);
    // whether this process saw Redis's connection close before the Ctrl-C or not, the fork says
    // its host was not told (it used to say only "the engine was destroyed" in the second case)
    for (const fork of summary.fork_results)
      expect(fork.error!.message).toMatch(
        /Redis unreachable: its host was not told|Redis did not confirm the cancel: its host may not have been told/,
      );
  });
});
