import { rmSync } from 'node:fs';
import Anthropic from '@anthropic-ai/sdk';
import { ManualClock } from '../src/core/util/clock.ts';
import { startEmulator } from '../src/integrations/emulator/start.ts';
import type { WarmStrategy } from '../src/core/settings/engine-settings.ts';
import type { MarkerStrategy } from '../src/core/prefix/freeze.ts';
import { driveFanOut, type DrivenResult } from './support/drive.ts';
import { BENCH_EPOCH, BENCH_MODEL, parentOfSize, type SizedParent } from './support/parent.ts';
import { SURVEY_SCRIPT, surveyEngine, surveyModel, surveyWorkspace } from './support/survey-model.ts';
import { providerCells } from './economics-providers.ts';
import { providerRows, providerSentence } from './economics-provider-rows.ts';
import type { SuiteOptions, SuiteResult } from './types.ts';
import { BENCH_BASELINES_NOTE, baselineColumns } from './economics-baseline.ts';

type StrategyName = 'forkcache' | 'fork-naive' | 'fresh-agents' | 'no-cache';

interface Strategy {
  markers: MarkerStrategy;
  warm: WarmStrategy;
  /** Fork the parent snapshot (true), or run each child as a fresh agent on the fallback prompt. */
  fork: boolean;
}

/**
 * The four arms. `fresh-agents` runs each child without the parent's history (fallback system
 * prompt + tool declarations + directive) through the same boundary marker and warm-first
 * gate as forkcache: fresh agents of one type share their head through the cache. It is the
 * strategy the ledger's `fresh_agents` baseline (src/core/ledger/fresh-agents.ts) models from a fork
 * arm's own turns, so the forkcache row's `fresh_agents_usd` and this arm's `cost_usd` differ
 * only by what the agents really did (the same survey turns here, a plainer directive message).
 */
const STRATEGIES: Readonly<Record<StrategyName, Strategy>> = {
  forkcache: { markers: 'boundary', warm: 'first-child', fork: true },
  'fork-naive': { markers: 'last-only', warm: 'none', fork: true },
  'fresh-agents': { markers: 'boundary', warm: 'first-child', fork: false },
  'no-cache': { markers: 'none', warm: 'none', fork: true },
};

const SEED = 6;
const round = (x: number, digits: number): number => Math.round(x * 10 ** digits) / 10 ** digits;
const directivesFor = (n: number): string[] =>
  Array.from({ length: n }, (_, i) => `survey part ${i + 1} of ${n} and report`);

interface Cell {
  prefix: number;
  forks: number;
  strategy: StrategyName;
  run: DrivenResult;
}

/**
 * Suite 4, the economics sweep: one emulator (realistic latency on a ManualClock, seed 6, the
 * 3-turn `survey` model), every (prefix, N, strategy) from a cold cache, in one run. Cost and
 * cache metrics come from the fan-out's ledger summary; makespan is emulated time.
 */
export async function economicsSuite(options: SuiteOptions): Promise<SuiteResult> {
  const sizes = options.quick ? [1, 4, 16] : [1, 2, 4, 8, 16, 32];
  const prefixes = [10_000, 100_000];
  // Emulated time starts on the catalogue's date, so each request is priced with the rows in force then.
  const clock = new ManualClock(BENCH_EPOCH);
  const emulator = await startEmulator({
    latency: 'realistic',
    clock,
    seed: SEED,
    scripts: { [SURVEY_SCRIPT]: surveyModel },
  });
  const client = new Anthropic({ apiKey: 'bench', baseURL: emulator.url, maxRetries: 0 });
  const workspace = surveyWorkspace();
  const cells: Cell[] = [];
  let chatRows: Record<string, unknown>[];
  try {
    const parents = new Map<string, SizedParent>();
    for (const prefix of prefixes)
      for (const n of sizes) parents.set(`${prefix}/${n}`, await parentOfSize(client, prefix, directivesFor(n), SEED));
    for (const [strategy, s] of Object.entries(STRATEGIES) as [StrategyName, Strategy][]) {
      const engine = await surveyEngine(emulator, clock, workspace, s, Math.max(...sizes));
      try {
        for (const prefix of prefixes) {
          for (const n of sizes) {
            emulator.clearCache(); // every cell starts cold
            const parent = parents.get(`${prefix}/${n}`)!;
            const directives = directivesFor(n);
            const run = await driveFanOut(
              clock,
              emulator,
              () =>
                s.fork
                  ? engine.fanOut(parent.snapshot, directives)
                  : engine.fanOut(undefined, directives, { model: BENCH_MODEL }),
              {
                forks: n,
                warm: s.warm,
              },
            );
            const failed = run.forks.filter((f) => f.status !== 'completed');
            if (failed.length > 0)
              throw new Error(
                `economics: ${strategy} N=${n} prefix=${prefix}: ${failed.length} fork(s) ${failed[0]!.status}: ${failed[0]!.error?.message ?? ''}`,
              );
            if (run.forcedSteps > 0)
              process.stderr.write(
                `economics: ${strategy} N=${n} prefix=${prefix}: ${run.forcedSteps} forced clock step(s)\n`,
              );
            cells.push({ prefix, forks: n, strategy, run });
          }
        }
      } finally {
        await engine.close();
      }
    }
    // The provider axis: DashScope (explicit) and OpenAI (automatic) at 1, 4 and 16 forks.
    const axis = sizes.filter((n) => [1, 4, 16].includes(n));
    const snapshots = new Map([...parents].map(([key, parent]) => [key, parent.snapshot]));
    chatRows = providerRows(await providerCells(clock, snapshots, prefixes, axis, workspace, SEED));
  } finally {
    await emulator.close();
    rmSync(workspace, { recursive: true, force: true });
  }
  const rows = [...tabulate(cells, prefixes, sizes), ...chatRows];
  return {
    name: 'economics',
    title: 'Cache economics sweep by provider (emulator, realistic latency on emulated time, 3-turn forks, cold cache)',
    rows,
    conclusion: `${conclude(rows)} ${providerSentence(rows)} ${BENCH_BASELINES_NOTE}`,
  };
}

function tabulate(cells: Cell[], prefixes: number[], sizes: number[]): Record<string, unknown>[] {
  const rows: Record<string, unknown>[] = [];
  const find = (prefix: number, forks: number, strategy: StrategyName): Cell =>
    cells.find((c) => c.prefix === prefix && c.forks === forks && c.strategy === strategy)!;
  for (const prefix of prefixes) {
    for (const forks of sizes) {
      // The bench model is in the catalogue: every cost is priced (never null).
      const noCache = find(prefix, forks, 'no-cache').run.summary.cost_usd.actual!;
      for (const strategy of Object.keys(STRATEGIES) as StrategyName[]) {
        const { summary, makespanMs } = find(prefix, forks, strategy).run;
        rows.push({
          provider: 'anthropic',
          prefix: `${prefix / 1000}K`,
          forks,
          strategy,
          shared_tokens: summary.prefix.shared_tokens ?? 'n/a',
          fanout_hit_ratio: round(summary.cache.fanout_hit_ratio, 3),
          cache_efficiency: round(summary.cache.cache_efficiency, 3),
          cost_usd: round(summary.cost_usd.actual!, 4),
          fresh_agents_usd: baselineColumns(summary).fresh_agents_usd ?? 'n/a',
          savings_vs_no_cache: `${(((noCache - summary.cost_usd.actual!) / noCache) * 100).toFixed(1)}%`,
          makespan_s: round(makespanMs / 1000, 2),
        });
      }
    }
  }
  return rows;
}

/** One sentence from the rows: the largest cell, forkcache against its rivals. */
function conclude(rows: Record<string, unknown>[]): string {
  const last = rows.filter((r) => r['provider'] === 'anthropic').at(-1)!;
  const cell = (strategy: StrategyName): Record<string, unknown> =>
    rows.find(
      (r) =>
        r['provider'] === 'anthropic' &&
        r['prefix'] === last['prefix'] &&
        r['forks'] === last['forks'] &&
        r['strategy'] === strategy,
    )!;
  const fc = cell('forkcache');
  const naive = cell('fork-naive');
  const fresh = cell('fresh-agents');
  const cost = (r: Record<string, unknown>): number => Number(r['cost_usd']);
  const time = (r: Record<string, unknown>): number => Number(r['makespan_s']);
  const naiveVsFc = cost(naive) / cost(fc);
  const slower = time(fc) - time(naive);
  return (
    `At ${String(last['forks'])} forks over a ${String(last['prefix'])}-token prefix, forkcache had cache efficiency ${String(fc['cache_efficiency'])} against ${String(naive['cache_efficiency'])} for fork-naive ` +
    `and cost $${cost(fc).toFixed(4)} (${String(fc['savings_vs_no_cache'])} below no-cache; fork-naive ${naiveVsFc.toFixed(2)}× as much, ${String(naive['savings_vs_no_cache'])}), ` +
    `finishing in ${time(fc)} s against ${time(naive)} s for fork-naive (${slower >= 0 ? `${slower.toFixed(2)} s slower: siblings wait for the first response to begin` : `${(-slower).toFixed(2)} s faster`}); ` +
    `fresh agents without the parent's history cost $${cost(fresh).toFixed(4)}.`
  );
}
