import { readdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, relative } from 'node:path';
import { defineConfig } from 'vitest/config';

/*
 * Three projects: `npm test` runs `unit` and `integration`, `npm run test:slow` runs `slow`
 * (the list below); CI runs both. `unit`: tests of code in this process (worker threads of their own included),
 * on vitest's threads with as many workers as there are cores. `integration`: tests that run
 * the forkcache command (in-process through test/cli/run-cli.ts, which sets the environment and
 * captures the standard streams of the process, or as real processes), or the real servers
 * (redis-server, llama-server, a browser), on forks, `FORKCACHE_TEST_WORKERS` at a time
 * (default 2: they start processes of their own, and a 2-core machine runs two well); each
 * fork runs file after file, as each thread of `unit` does (`isolate: false`).
 *
 * A file is integration when its source names one of INTEGRATION_MARKS: the classification
 * follows what the test does, so a new test lands in the right project without a list here.
 *
 * The processes and worker threads the tests start run a JavaScript build of the sources, made
 * once per content before the first file (test/setup/global-build.ts): Piscina workers would
 * otherwise each load the tsx loader (vitest only transforms the test's own imports), and each
 * spawned command too; the vitest workers themselves need no loader (vite transforms).
 *
 * The timeouts are hang guards, not speed checks: tests wait on events, never on time, and on
 * a busy 2-core machine (load 20+) a real forkcache run takes minutes.
 */
const INTEGRATION_MARKS = [
  'run-cli.ts', // the forkcache command, in-process or as a process
  'node:child_process',
  'process.kill',
  "process.on('SIG",
  'redis',
  'llama',
  'chromium',
  'playwright',
];

/*
 * The slow tier (`npm run test:slow`, which .ci/run runs after `npm test`): end-to-end flows
 * whose cost is the real work, not the harness — the real engines and clients (llama-server,
 * Claude Code, the Agent SDK), the examples run as a user runs them, hundreds of forks in a
 * pseudo-terminal, the demo and a plan on every provider's wire, the review-and-merge flows
 * and Redis killed under a distributed run, a plan over three repositories, the worktree disk
 * budget at 60 forks, the packed types compiled without the optional peers. `npx vitest run
 * FILE` runs any of them alone.
 */
const SLOW = [
  'test/providers/llama-cpp/llama-server/',
  'test/clients/',
  'test/examples/',
  'test/scenarios/',
  'test/cli/board/board-pty.test.ts',
  'test/cli/demo-providers.test.ts',
  'test/cli/run-providers.test.ts',
  'test/cli/merge-one-pass.test.ts',
  'test/cli/runs-never-lost.test.ts',
  'test/cli/review.test.ts',
  'test/integrations/distributed/redis-cli.test.ts',
  'test/integrations/distributed/redis-lost.test.ts',
  'test/integrations/distributed/redis-restart.test.ts',
  'test/cli/multi-repo.test.ts',
  'test/cli/worktree-disk.test.ts',
  'test/types/optional-peers.test.ts',
  'test/security/hostile-fan-out.test.ts',
];

const ROOT = import.meta.dirname;

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? e.name === 'fixtures'
        ? []
        : testFiles(join(dir, e.name))
      : e.name.endsWith('.test.ts')
        ? [join(dir, e.name)]
        : [],
  );
}

const all = testFiles(join(ROOT, 'test')).map((file) => relative(ROOT, file));
const slow = all.filter((file) => SLOW.some((entry) => file.startsWith(entry)));
const integration = all
  .filter((file) => !slow.includes(file))
  .filter((file) => {
    const source = readFileSync(join(ROOT, file), 'utf8');
    return INTEGRATION_MARKS.some((mark) => source.includes(mark));
  });

const workers = Number(process.env['FORKCACHE_TEST_WORKERS'] ?? 2);
if (!Number.isInteger(workers) || workers < 1) throw new Error('FORKCACHE_TEST_WORKERS: expected a whole number ≥ 1');

export default defineConfig({
  test: {
    globalSetup: ['test/setup/global-build.ts'],
    // the provider adapters, as the public entries hand them to core (test/setup/providers.ts)
    setupFiles: ['test/setup/providers.ts'],
    // every skipped test named with its reason, after the summary (test/setup/skip-reasons.ts)
    reporters: ['default', './test/setup/skip-reasons.ts'],
    testTimeout: 600_000,
    hookTimeout: 600_000,
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          exclude: [...integration, ...slow],
          pool: 'threads',
          maxWorkers: Math.max(1, availableParallelism()),
          isolate: false,
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: integration,
          pool: 'forks',
          maxWorkers: workers,
          // one process per worker runs file after file (as `unit` does in its threads): a file
          // no longer pays a fresh process's module graph (the providers' registry and both SDKs
          // in the setup file alone). What a file changes in its process (the environment, the
          // working directory, a signal handler) it puts back, as it must for its own tests.
          isolate: false,
        },
      },
      {
        extends: true,
        test: {
          name: 'slow',
          include: slow,
          pool: 'forks',
          maxWorkers: workers,
        },
      },
    ],
  },
});
