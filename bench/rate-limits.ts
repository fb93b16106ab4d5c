import { rmSync } from 'node:fs';
import Anthropic from '@anthropic-ai/sdk';
import { ManualClock } from '../src/core/util/clock.ts';
import { LATENCY_PROFILES, outputMs, timeToFirstTokenMs } from '../src/integrations/emulator/latency.ts';
import { startEmulator } from '../src/integrations/emulator/start.ts';
import { ForkEngine } from '../src/index.ts';
import type { ForkEngineOptions } from '../src/core/engine/options.ts';
import { type BenchOptions, withBenchOptions } from '../src/core/engine/bench-options.ts';
import { findModel } from '../src/core/models/catalogue.ts';
import { limitsFor, presetTable } from '../src/core/rate-limits/presets.ts';
import type { ForkResult } from '../src/core/agent/fork-handle.ts';
import { SCRIPT_HEADER } from '../src/integrations/emulator/scripts/types.ts';
import { driveFanOut, type DrivenResult } from './support/drive.ts';
import { BENCH_EPOCH, BENCH_MODEL, parentOfSize } from './support/parent.ts';
import { SURVEY_SCRIPT, surveyModel, surveyWorkspace } from './support/survey-model.ts';
import type { SuiteOptions, SuiteResult } from './types.ts';

type ArmName = 'forkcache' | 'fork-naive' | 'capped-20';

/**
 * The arms. forkcache: boundary marker, warm-first, rate-limit admission. The other two are
 * what peers do: the marker on each fork's last block only, everything sent at once (or 20
 * forks at a time, Claude Code's cap), and per-call retries as the SDK makes them (2, each
 * after the 429's `retry-after`, on the emulated clock), after which the fork has failed.
 */
const ARMS: Readonly<Record<ArmName, Partial<ForkEngineOptions> & BenchOptions & { slots: number | undefined }>> = {
  forkcache: { markers: 'boundary', warm: 'first-child', admission: 'on', slots: undefined },
  'fork-naive': {
    markers: 'last-only',
    warm: 'none',
    admission: 'off',
    turnRetry: { retries: 2, baseMs: 0 },
    slots: undefined,
  },
  'capped-20': {
    markers: 'last-only',
    warm: 'none',
    admission: 'off',
    turnRetry: { retries: 2, baseMs: 0 },
    concurrency: 20,
    slots: 20,
  },
};

const SEED = 6;
const PREFIX = 100_000;
const round = (x: number, digits: number): number => Math.round(x * 10 ** digits) / 10 ** digits;

interface ArmRun {
  arm: ArmName;
  run: DrivenResult;
  http429: number;
  /** 429s more than a minute after the fan-out began (after learning). */
  late429: number;
}

/**
 * The `rate-limits` suite: N forks × 3 turns over a 100K-token prefix under the Start preset
 * (the bench model's class: Opus 5.5, whose row is a placeholder copying Opus 5's 1,000 RPM /
 * 2M ITPM / 400K OTPM), realistic latency on emulated time, each arm from a cold cache and
 * full buckets (its own API key). Makespan against the theoretical minimum for the work.
 */
export async function rateLimitsSuite(options: SuiteOptions): Promise<SuiteResult> {
  const forks = options.quick ? 50 : 200;
  const directives = Array.from({ length: forks }, (_, i) => `survey part ${i + 1} of ${forks} and report`);
  const clock = new ManualClock(BENCH_EPOCH);
  const table = presetTable('start');
  const emulator = await startEmulator({
    latency: 'realistic',
    clock,
    seed: SEED,
    scripts: { [SURVEY_SCRIPT]: surveyModel },
    rateLimits: table,
  });
  const client = new Anthropic({ apiKey: 'bench-sizing', baseURL: emulator.url, maxRetries: 0 });
  const workspace = surveyWorkspace();
  const runs: ArmRun[] = [];
  try {
    const parent = await parentOfSize(client, PREFIX, directives, SEED);
    for (const [arm, { slots, markers, ...engineOptions }] of Object.entries(ARMS) as [
      ArmName,
      (typeof ARMS)[ArmName],
    ][]) {
      emulator.clearCache();
      const engine = await ForkEngine.create(
        withBenchOptions<ForkEngineOptions>(
          {
            baseURL: emulator.url,
            apiKey: `bench-${arm}`, // buckets are per key: every arm starts full
            headers: { [SCRIPT_HEADER]: SURVEY_SCRIPT },
            maxRetries: 0,
            workspace,
            clock,
            concurrency: 1000,
            pool: { maxThreads: 2, concurrentTasksPerWorker: Math.ceil((slots ?? forks) / 2) },
            ...engineOptions,
          },
          { markers },
        ),
      );
      const t0 = clock.now();
      let http429 = 0;
      let late429 = 0;
      const off = emulator.on('request-end', (e) => {
        if (e.status !== 429) return;
        http429++;
        if (clock.now() - t0 > 60_000) late429++;
      });
      try {
        const run = await driveFanOut(clock, emulator, () => engine.fanOut(parent.snapshot, directives), {
          forks,
          warm: engineOptions.warm!,
          gate: () => engine.admission,
          ...(slots ? { slots } : {}),
        });
        if (run.forcedSteps > 0) process.stderr.write(`rate-limits: ${arm}: ${run.forcedSteps} forced clock step(s)\n`);
        runs.push({ arm, run, http429, late429 });
      } finally {
        off();
        await engine.close();
      }
    }
  } finally {
    await emulator.close();
    rmSync(workspace, { recursive: true, force: true });
  }
  const limits = limitsFor(table, findModel(BENCH_MODEL)!.family)!;
  const min = minimumMakespan(runs.find((r) => r.arm === 'forkcache')!.run.forks, limits);
  const rows = runs.map(({ arm, run, http429, late429 }) => ({
    arm,
    forks,
    makespan_s: round(run.makespanMs / 1000, 2),
    min_makespan_s: round(min.ms / 1000, 2),
    ratio_to_min: round(run.makespanMs / min.ms, 3),
    http_429: http429,
    http_429_after_1min: late429,
    cost_usd: round(run.summary.cost_usd.actual!, 4),
    forks_failed: run.forks.filter((f) => f.status !== 'completed').length,
  }));
  return {
    name: 'rate-limits',
    title: `Rate limits: ${forks} forks × 3 turns over a 100K-token prefix under the Start preset (${limits.rpm} RPM, ${limits.itpm / 1e6}M ITPM, ${limits.otpm / 1e3}K OTPM; realistic latency on emulated time)`,
    rows,
    conclusion: conclude(rows, min),
  };
}

interface Minimum {
  ms: number;
  bound: string;
}

/**
 * The fastest the limits allow for this work: the largest of (work − one bucket's burst) /
 * rate for ITPM, RPM and OTPM, and the critical path. The work is the least any arm must do:
 * the forkcache arm's (the prefix written once, every other input read), which is what any
 * schedule that shares the prefix sends. The critical path is the warmer's chain: its first
 * turn prefills the whole prefix, its later turns read it (TTFT + output time of each, from
 * the emulator's latency profile); no fork can finish sooner.
 */
function minimumMakespan(forks: readonly ForkResult[], limits: { rpm: number; itpm: number; otpm: number }): Minimum {
  const requests = forks.flatMap((f) => f.requests);
  const itpm = requests.reduce((n, r) => n + r.usage.input_tokens + r.usage.cache_creation_input_tokens, 0);
  const output = requests.reduce((n, r) => n + r.usage.output_tokens, 0);
  const minute = (work: number, perMinute: number): number => (Math.max(0, work - perMinute) / perMinute) * 60_000;
  const profile = LATENCY_PROFILES.realistic;
  const chain = (f: ForkResult): number =>
    f.requests.reduce(
      (ms, r) =>
        ms +
        timeToFirstTokenMs(profile, {
          uncachedTokens: r.usage.input_tokens + r.usage.cache_creation_input_tokens,
          cacheReadTokens: r.usage.cache_read_input_tokens,
        }) +
        outputMs(profile, r.usage.output_tokens),
      0,
    );
  const warmer = [...forks].sort(
    (a, b) =>
      (b.requests[0]?.usage.cache_creation_input_tokens ?? 0) - (a.requests[0]?.usage.cache_creation_input_tokens ?? 0),
  )[0]!;
  const bounds: [string, number][] = [
    ['ITPM', minute(itpm, limits.itpm)],
    ['RPM', minute(requests.length, limits.rpm)],
    ['OTPM', minute(output, limits.otpm)],
    ['critical path', chain(warmer)],
  ];
  const [bound, ms] = bounds.reduce((a, b) => (b[1] > a[1] ? b : a));
  return { ms, bound };
}

function conclude(rows: Record<string, unknown>[], min: Minimum): string {
  const row = (arm: ArmName): Record<string, unknown> => rows.find((r) => r['arm'] === arm)!;
  const fc = row('forkcache');
  const naive = row('fork-naive');
  const capped = row('capped-20');
  const f = (r: Record<string, unknown>): string =>
    `${String(r['makespan_s'])} s (${String(r['ratio_to_min'])}× the minimum, ${String(r['http_429'])} 429s, ${String(r['forks_failed'])} forks failed, $${String(r['cost_usd'])})`;
  return (
    `The minimum for this work is ${round(min.ms / 1000, 2)} s (bound: ${min.bound}). forkcache finished in ${f(fc)}; fork-naive in ${f(naive)}; capped-20 in ${f(capped)}. ` +
    'A failed fork stops early and spends nothing more: the makespan and cost of an arm that lost forks are those of a run that did not finish its work.'
  );
}
