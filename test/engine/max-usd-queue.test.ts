import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ForkEngine } from '../../src/engine/engine.ts';
import { git, repoWith } from '../tools/git-fixture.ts';
import { bigSnapshot, sharedEmulator, workspace } from './helpers.ts';

// Issue 42: after the spend cap was reached, the 69 forks still queued were marked `capped` one
// at a time (minutes under load): each took a slot, made its worktree, started in a worker and
// had its first request refused. Now the queue ends at the cap's stop, in one batch, with no
// slot, worktree or request of its own. Counted in events and requests, never in time.

const FILES = Object.fromEntries(
  Array.from({ length: 10 }, (_, i) => [`f${i}.ts`, `export const v${i} = fetchData(${i});\n`]),
);
const DIRECTIVES = Object.keys(FILES).map((f) => `rename fetchData to loadData in ${f}`);
const emulator = sharedEmulator({ script: 'refactor' });

const options = (repo: string, runDir: string, maxUsd?: number) => ({
  baseURL: emulator.current.url,
  apiKey: 'test',
  workspace: repo,
  runDir,
  maxTokens: 512,
  warm: 'prewarm' as const,
  isolation: 'worktree' as const,
  // one fork at a time: every other fork is queued while the first runs
  pool: { maxThreads: 1, concurrentTasksPerWorker: 1 },
  ...(maxUsd === undefined ? {} : { maxUsd }),
});

const branches = (repo: string): string[] =>
  git(repo, 'for-each-ref', '--format=%(refname:short)', 'refs/heads/forkcache/').split('\n').filter(Boolean);

describe('maxUsd reached with forks queued', () => {
  it('ends every queued fork capped at once: no slot, worktree or request of its own; resume goes on with them', async () => {
    const tag = `cap-queue-${Date.now()}`;
    // what one fork costs, its pre-warm included
    const free = await ForkEngine.create(options(repoWith(FILES), workspace({})));
    const one = await free
      .fanOut(bigSnapshot(tag), DIRECTIVES.slice(0, 1))
      .settled()
      .finally(() => free.close());
    expect(one.forks[0]!.status).toBe('completed');
    const cost = one.summary.cost_usd.actual!;

    emulator.current.clearCache();
    const repo = repoWith(FILES);
    const runs = workspace({});
    let requests = 0;
    const off = emulator.current.on('request-start', () => requests++);
    const engine = await ForkEngine.create(options(repo, runs, cost * 2)); // the first fork cannot finish
    const fan = engine.fanOut(bigSnapshot(tag), DIRECTIVES);
    const result = await fan.settled().finally(async () => {
      off();
      await engine.close();
    });
    const runDir = join(runs, fan.id);
    const lines = readFileSync(join(runDir, 'events.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { type: string; forkId?: string; status?: string; queued?: number });
    const started = new Set(lines.filter((l) => l.type === 'fork-start').map((l) => l.forkId));
    const never = result.forks.filter((f) => !started.has(f.forkId));
    expect(started.size).toBe(1); // the cap was reached during the first fork
    expect(never).toHaveLength(DIRECTIVES.length - 1);

    // every queued fork ended capped, with the cap's error, and kept nothing
    for (const fork of never) {
      expect(fork.status).toBe('capped');
      expect(fork.error?.code).toBe('SPEND_CAP_MAX_USD');
      expect(fork.requests).toEqual([]);
    }
    // one batch: the cap's stop, then the queued forks' ends, one after another, nothing between
    const stop = lines.findIndex((l) => l.type === 'spend-cap-stop');
    expect(lines[stop]!.queued).toBe(never.length);
    const batch = lines.slice(stop + 1, stop + 1 + never.length);
    expect(batch.map((l) => [l.type, l.status])).toEqual(never.map(() => ['fork-end', 'capped']));
    expect(new Set(batch.map((l) => l.forkId))).toEqual(new Set(never.map((f) => f.forkId)));

    // no request of their own: the API saw the pre-warm and the started fork's requests only
    const sent = result.forks.reduce((n, f) => n + f.requests.length + (f.failedAttempts?.length ?? 0), 0);
    expect(requests).toBe(result.summary.warmups + sent);
    // no worktree and no branch of their own
    const trees = join(runDir, 'worktrees');
    const made = existsSync(trees) ? readdirSync(trees) : [];
    const forkBranches = branches(repo);
    for (const fork of never) {
      expect(made.some((name) => name.includes(fork.forkId))).toBe(false);
      expect(forkBranches.some((b) => b.includes(fork.forkId))).toBe(false);
    }
    expect(result.summary.spend_cap).toMatchObject({ stopped: true, stopped_forks: DIRECTIVES.length });

    // a higher cap goes on with every fork
    const more = await ForkEngine.create(options(repo, runs, cost * DIRECTIVES.length * 4));
    try {
      const resumed = await more.resume(runDir).settled();
      expect(resumed.forks.map((f) => f.status)).toEqual(DIRECTIVES.map(() => 'completed'));
    } finally {
      await more.close();
    }
  });
});
