import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { TOOL_DECLARATIONS } from '../../../src/core/tools/declarations.ts';
import { cliArgs } from '../../cli/run-cli.ts';
import { sharedEmulator } from '../../core/engine/helpers.ts';
import { HAVE_REDIS, hostEnv, Proc, REDIS_SERVER, RedisServer, ROOT, startHost } from './cluster.ts';

// Issue 44: bullmq 6 (ioredis, redis and pg as peers) beside 5. The dev dependency `bullmq` is
// 5; `bullmq6` is an npm alias of 6. Each run's submitter and host are real `forkcache`
// processes whose `bullmq` resolves to the major under test (test/integrations/distributed/bullmq-major/).

const REGISTER = pathToFileURL(join(ROOT, 'test/integrations/distributed/bullmq-major/register.mjs')).href;
const MAJORS = [
  { pkg: 'bullmq', major: 5 },
  { pkg: 'bullmq6', major: 6 },
] as const;

const emulator = sharedEmulator({ script: 'refactor' });
const QUEUE = 'forkcache-forks'; // the default of `run` and `worker`

function plan(directives: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'fc-bullmq-'));
  const parent = {
    ...(JSON.parse(readFileSync(join(ROOT, 'examples/plan/parent.json'), 'utf8')) as Record<string, unknown>),
    tools: TOOL_DECLARATIONS,
  };
  const path = join(dir, 'plan.json');
  writeFileSync(path, JSON.stringify({ parent, directives, workspace: '.', runDir: 'runs', allow: ['bash'] }));
  return path;
}

describe.skipIf(!HAVE_REDIS)(`the distributed backend on each bullmq major (needs ${REDIS_SERVER})`, () => {
  it.each(MAJORS)('bullmq $major: a host serves a CLI run, every fork completes', async ({ pkg, major }) => {
    const path = plan(['run `echo one` and report', 'run `echo two` and report']);
    // a Redis of its own: the queue's meta (below) is this major's alone
    const redis = await RedisServer.start();
    const env = hostEnv({
      ANTHROPIC_BASE_URL: emulator.current.url,
      ANTHROPIC_API_KEY: 'test',
      FORKCACHE_TEST_BULLMQ: pkg,
    });
    const host = await startHost(redis.url, ['--threads', '1', '--allow', 'bash'], {
      ...env,
      NODE_OPTIONS: `--import ${REGISTER}`,
    });
    try {
      const run = new Proc(
        process.execPath,
        ['--import', REGISTER, ...cliArgs(), 'run', path, '--api', 'real', '--redis', redis.url, '--json'],
        env,
      );
      expect(await run.exited, run.stderr).toBe(0);
      const summary = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as { fork_results: { status: string }[] };
      expect(summary.fork_results.map((f) => f.status)).toEqual(['completed', 'completed']);
      // the queue was made by the major under test: bullmq writes its version in the queue's meta
      const client = new Redis(redis.url);
      try {
        const version = await client.hget(`bull:${QUEUE}:meta`, 'version');
        expect(version).toMatch(new RegExp(`^bullmq:${major}\\.`));
      } finally {
        client.disconnect();
      }
    } finally {
      await host.proc.kill();
      await redis.kill();
    }
  });
});
