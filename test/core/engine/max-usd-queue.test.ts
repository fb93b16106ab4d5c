import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ForkEngine } from '../../../src/core/engine/engine.ts';
import type { FanOutResult } from '../../../src/core/agent/fork-handle.ts';
import { transcriptPath } from '../../../src/core/run-dir/files.ts';
import { readTranscript } from '../../../src/core/run-dir/transcript-reader.ts';
import { git, repoWith } from '../tools/git-fixture.ts';
import { bigSnapshot, sharedEmulator, workspace } from './helpers.ts';

// Issue 42: after the spend cap was reached, the 69 forks still queued were marked `capped` one
// at a time (minutes under load): each took a slot, made its worktree, started in a worker and
// had its first request refused. Now a queued fork whose first request the cap can never admit
// ends `capped` at once, with no slot, worktree or request of its own, while a queued fork whose
// first request still fits runs (closing the whole queue at the first refusal spent 37% of a
// cap: the revert of f60a1ca). Counted in events and requests, never in time.

const FILES = Object.fromEntries(
  Array.from({ length: 6 }, (_, i) => [`f${i}.ts`, `export const v${i} = fetchData(${i});\n`]),
);
const rename = (i: number): string => `rename fetchData to loadData in f${i}.ts`;
// forks 2-5 ask much more of their first request than fork 1 or 6 (40 KB of context each)
const BIG = Array.from({ length: 4 }, (_, k) => k + 1);
const context = `\n\nContext, for the record: ${'the rename is mechanical and keeps behaviour. '.repeat(850)}`;
const DIRECTIVES = Array.from({ length: 6 }, (_, i) => (BIG.includes(i) ? `${rename(i)}${context}` : rename(i)));
const emulator = sharedEmulator({ script: 'refactor' });

const options = (repo: string, runDir: string, maxUsd?: number) => ({
  baseURL: emulator.current.url,
  apiKey: 'test',
  workspace: repo,
  runDir,
  maxTokens: 512,
  warm: 'prewarm' as const,
  isolation: 'worktree' as const,
  // one fork at a time: every other fork is queued while one runs
  pool: { maxThreads: 1, concurrentTasksPerWorker: 1 },
  ...(maxUsd === undefined ? {} : { maxUsd }),
});

interface Line {
  type: string;
  forkId?: string;
  status?: string;
  forks?: string[];
}

const branches = (repo: string): string[] =>
  git(repo, 'for-each-ref', '--format=%(refname:short)', 'refs/heads/forkcache/').split('\n').filter(Boolean);

/** One fan-out of `directives` under `maxUsd`, with the requests the emulator saw during it. */
async function run(
  repo: string,
  runs: string,
  maxUsd: number | undefined,
  go: (engine: ForkEngine) => { id: string; settled(): Promise<FanOutResult> },
): Promise<{ result: FanOutResult; runDir: string; lines: Line[]; requests: number }> {
  emulator.current.clearCache();
  let requests = 0;
  const off = emulator.current.on('request-start', () => requests++);
  const engine = await ForkEngine.create(options(repo, runs, maxUsd));
  try {
    const fan = go(engine);
    const result = await fan.settled();
    const runDir = join(runs, fan.id);
    const lines = readFileSync(join(runDir, 'events.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Line);
    return { result, runDir, lines, requests };
  } finally {
    off();
    await engine.close();
  }
}

/** This pass's lines (a resumed run's events.jsonl holds every pass). */
const lastPass = (lines: Line[]): Line[] => lines.slice(lines.map((l) => l.type).lastIndexOf('fanout-start'));

/** The forks the cap ended at once: one `spend-cap-queue` line naming them, then their ends, nothing between. */
function cappedAtOnce(lines: Line[], ids: string[]): number {
  const at = lines.findIndex((l) => l.type === 'spend-cap-queue');
  expect(at, 'a spend-cap-queue line').toBeGreaterThanOrEqual(0);
  expect(lines.filter((l) => l.type === 'spend-cap-queue')).toHaveLength(1);
  expect(new Set(lines[at]!.forks)).toEqual(new Set(ids));
  const batch = lines.slice(at + 1, at + 1 + ids.length);
  expect(batch.map((l) => [l.type, l.status])).toEqual(ids.map(() => ['fork-end', 'capped']));
  expect(new Set(batch.map((l) => l.forkId))).toEqual(new Set(ids));
  return at;
}

/** No slot, worktree, branch or request of their own (a first pass); the same record as any capped fork. */
function neverStarted(r: Awaited<ReturnType<typeof run>>, repo: string, ids: string[]): void {
  const pass = lastPass(r.lines);
  const started = new Set(pass.filter((l) => l.type === 'fork-start').map((l) => l.forkId));
  const trees = join(r.runDir, 'worktrees');
  const made = existsSync(trees) ? readdirSync(trees) : [];
  for (const id of ids) {
    const fork = r.result.forks.find((f) => f.forkId === id)!;
    expect(fork.status).toBe('capped');
    expect(fork.error?.code).toBe('SPEND_CAP_MAX_USD');
    // the figure is the least its first turn could hold, and says so
    expect(fork.error?.message).toMatch(/its first turn would hold at least \$\d/);
    expect(fork.requests).toEqual([]);
    expect(started.has(id)).toBe(false);
    expect(made.some((name) => name.includes(id))).toBe(false);
    expect(branches(repo).some((b) => b.includes(id))).toBe(false);
    expect(readTranscript(transcriptPath(r.runDir, id)).end?.status).toBe('capped');
  }
  // the API saw the pre-warm and the started forks' requests, nothing of theirs
  const sent = r.result.forks
    .filter((f) => !ids.includes(f.forkId))
    .reduce((n, f) => n + f.requests.length + (f.failedAttempts?.length ?? 0), 0);
  // (a pre-warm the cap refused is counted in `warmups`, but was never sent)
  const warmed = pass.filter((l) => l.type === 'warmup-end').length;
  expect(r.requests).toBe(warmed + sent);
}

describe('maxUsd reached with forks queued', () => {
  it('ends at once the queued forks whose first request can never fit, runs the one that still fits, and resume goes on with them', async () => {
    const tag = `cap-queue-${Date.now()}`;
    const ids = (id: string, which: number[]): string[] => which.map((i) => `${id}-f${String(i + 1).padStart(2, '0')}`);

    // what the pre-warm and fork 1 cost, uncapped
    const alone = await run(repoWith(FILES), workspace({}), undefined, (e) =>
      e.fanOut(bigSnapshot(tag), DIRECTIVES.slice(0, 1)),
    );
    expect(alone.result.forks[0]!.status).toBe('completed');
    const cost1 = alone.result.summary.cost_usd.actual!;

    // a cap that fork 1 fits in, and no big first request beside it: capped before any fork starts
    const first = await run(repoWith(FILES), workspace({}), cost1, (e) => e.fanOut(bigSnapshot(tag), DIRECTIVES));
    const big0 = ids(first.result.fanOutId, BIG);
    const look = cappedAtOnce(first.lines, big0);
    expect(first.lines.findIndex((l) => l.type === 'fork-start')).toBeGreaterThan(look);
    const refusal = first.result.forks[1]!.error!.data as { spentUsd: number; nextBoundUsd: number };
    const prewarm = refusal.spentUsd; // spent when it looked: the pre-warm
    const bigFloor = refusal.nextBoundUsd; // the least a big first request can be held at
    const fork1 = cost1 - prewarm;
    expect(prewarm).toBeGreaterThan(0);
    expect(bigFloor).toBeGreaterThan(fork1);

    // a cap the big forks fit in at first, and no longer once fork 1 has spent half of its cost
    const repo = repoWith(FILES);
    const runs = workspace({});
    const cap = prewarm + bigFloor + fork1 / 2;
    const capped = await run(repo, runs, cap, (e) => e.fanOut(bigSnapshot(tag), DIRECTIVES));
    const id = capped.result.fanOutId;
    const big = ids(id, BIG);
    const at = cappedAtOnce(capped.lines, big);
    // while fork 1 ran: after its start, before its end, so before any later request of the queue
    const index = (type: string, fork: string): number =>
      capped.lines.findIndex((l) => l.type === type && l.forkId === fork);
    expect(index('fork-start', `${id}-f01`)).toBeLessThan(at);
    expect(index('fork-end', `${id}-f01`)).toBeGreaterThan(at);
    neverStarted(capped, repo, big);
    // fork 6's first request is small: it still fits, so it stays queued, starts after the batch and runs
    const last = capped.result.forks[5]!;
    expect(last.status).toBe('completed');
    expect(last.requests.length).toBeGreaterThan(0);
    expect(index('fork-start', `${id}-f06`)).toBeGreaterThan(at);
    expect(capped.result.forks[0]!.status).toBe('completed');
    expect(capped.result.summary.spend_cap).toMatchObject({ stopped: true, stopped_forks: BIG.length });
    expect(capped.result.summary.cost_usd.actual!).toBeLessThanOrEqual(cap);

    // resume under the same cap: the earlier passes' spending leaves no room, and the look before
    // the forks start ends them again, with no request of theirs
    const again = await run(repo, runs, cap, (e) => e.resume(capped.runDir));
    const pass = lastPass(again.lines);
    const look2 = cappedAtOnce(pass, big);
    expect(pass.findIndex((l) => l.type === 'fork-start')).toBe(-1);
    expect(look2).toBeGreaterThan(0);
    expect(again.requests).toBe(again.result.summary.warmups);
    for (const fork of again.result.forks.filter((f) => big.includes(f.forkId))) {
      expect(fork.status).toBe('capped');
      expect(fork.requests).toEqual([]);
    }

    // a higher cap goes on with every fork
    const more = await run(repo, runs, cap + bigFloor * 20, (e) => e.resume(capped.runDir));
    expect(more.result.forks.map((f) => f.status)).toEqual(DIRECTIVES.map(() => 'completed'));
  });

  it('a cap below the pre-warm: nothing can ever write the prefix, so every fork ends capped at once, and none sends a request', async () => {
    const tag = `cap-prewarm-${Date.now()}`;
    const few = DIRECTIVES.map((_, i) => rename(i)).slice(0, 4);
    // what a first request is held at while the prefix is not readable (its worst case)
    const tiny = await run(repoWith(FILES), workspace({}), 0.001, (e) => e.fanOut(bigSnapshot(tag), few));
    const worst = (tiny.result.forks[0]!.error!.data as { nextBoundUsd: number }).nextBoundUsd;

    // a third of it: below the pre-warm's own bound, above what a first request reading the
    // prefix would be held at; the pre-warm is refused, so no request can ever make it readable
    const repo = repoWith(FILES);
    const runs = workspace({});
    const r = await run(repo, runs, worst / 3, (e) => e.fanOut(bigSnapshot(tag), few));
    const id = r.result.fanOutId;
    const all = few.map((_, i) => `${id}-f${String(i + 1).padStart(2, '0')}`);
    expect(r.lines.some((l) => l.type === 'warmup-failed')).toBe(true);
    const at = cappedAtOnce(r.lines, all);
    expect(r.lines.slice(at).some((l) => l.type === 'fork-start')).toBe(false);
    neverStarted(r, repo, all);
    expect(r.requests).toBe(0);
    expect(r.result.forks[0]!.error!.data).toMatchObject({ nextBoundUsd: worst, spentUsd: 0 });
    expect(r.result.summary.spend_cap).toMatchObject({ stopped: true, stopped_forks: few.length, spent_usd: 0 });

    const more = await run(repo, runs, 10, (e) => e.resume(r.runDir));
    expect(more.result.forks.map((f) => f.status)).toEqual(few.map(() => 'completed'));
  });
});
