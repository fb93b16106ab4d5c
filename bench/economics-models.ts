import { rmSync } from 'node:fs';
import Anthropic from '@anthropic-ai/sdk';
import { ManualClock } from '../src/core/util/clock.ts';
import { startEmulator } from '../src/integrations/emulator/start.ts';
import { findModel } from '../src/core/models/catalogue.ts';
import { priceRowAt, readMultiplier } from '../src/core/models/pricing.ts';
import { driveFanOut } from './support/drive.ts';
import { BENCH_EPOCH, parentOfSize } from './support/parent.ts';
import { SURVEY_SCRIPT, surveyEngine, surveyModel, surveyWorkspace } from './support/survey-model.ts';
import type { SuiteOptions, SuiteResult } from './types.ts';
import { BENCH_BASELINES_NOTE, baselineColumns } from './economics-baseline.ts';

/** One current model per read multiplier: 0.1x (Haiku 5.5, band B at this size), 0.05x, 0.025x. */
const MODELS = ['claude-haiku-5-5', 'claude-opus-5-5', 'claude-fable-5-2'] as const;
const PREFIX = 100_000;
const FORKS = 8;
const SEED = 6;
const round = (x: number, digits: number): number => Math.round(x * 10 ** digits) / 10 ** digits;
const directives = Array.from({ length: FORKS }, (_, i) => `survey part ${i + 1} of ${FORKS} and report`);

/**
 * Suite 4b, the economics sweep by read multiplier: the same fan-out (100K shared tokens, 8
 * three-turn forks, cold cache) on one current model per read multiplier, forkcache
 * (boundary marker, warm-first) against no cache, on the emulator with realistic latency on
 * emulated time. The savings move with the model's read price: the ledger prices each request
 * with the row in force on the emulated date and, for Haiku 5.5, the band of its prompt.
 */
export async function economicsModelsSuite(_options: SuiteOptions): Promise<SuiteResult> {
  const clock = new ManualClock(BENCH_EPOCH);
  const emulator = await startEmulator({
    latency: 'realistic',
    clock,
    seed: SEED,
    scripts: { [SURVEY_SCRIPT]: surveyModel },
  });
  const client = new Anthropic({ apiKey: 'bench', baseURL: emulator.url, maxRetries: 0 });
  const workspace = surveyWorkspace();
  const rows: Record<string, unknown>[] = [];
  const arms = {
    forkcache: { markers: 'boundary', warm: 'first-child' },
    'no-cache': { markers: 'none', warm: 'none' },
  } as const;
  try {
    for (const model of MODELS) {
      const parent = await parentOfSize(client, PREFIX, directives, SEED, model);
      const costs: Record<string, number> = {};
      let forkcache: Awaited<ReturnType<typeof driveFanOut>> | undefined;
      for (const [arm, s] of Object.entries(arms)) {
        const engine = await surveyEngine(emulator, clock, workspace, s, FORKS);
        try {
          emulator.clearCache();
          const run = await driveFanOut(clock, emulator, () => engine.fanOut(parent.snapshot, directives), {
            forks: FORKS,
            warm: s.warm,
          });
          const failed = run.forks.filter((f) => f.status !== 'completed');
          if (failed.length > 0)
            throw new Error(`economics-models: ${model} ${arm}: ${failed.length} fork(s) ${failed[0]!.status}`);
          if (run.summary.cost_usd.actual === null) throw new Error(`economics-models: ${model} is not priced`);
          costs[arm] = run.summary.cost_usd.actual;
          if (arm === 'forkcache') forkcache = run;
        } finally {
          await engine.close();
        }
      }
      const tier = priceRowAt(findModel(model)!, BENCH_EPOCH)!.tiers.at(-1)!;
      rows.push({
        model,
        read_multiplier: readMultiplier(tier),
        prefix: `${PREFIX / 1000}K`,
        forks: FORKS,
        shared_tokens: parent.sharedTokens,
        fanout_hit_ratio: round(forkcache!.summary.cache.fanout_hit_ratio, 3),
        cache_efficiency: round(forkcache!.summary.cache.cache_efficiency, 3),
        forkcache_usd: round(costs['forkcache']!, 4),
        no_cache_usd: round(costs['no-cache']!, 4),
        fresh_agents_usd: baselineColumns(forkcache!.summary).fresh_agents_usd ?? 'n/a',
        savings_vs_no_cache: `${((1 - costs['forkcache']! / costs['no-cache']!) * 100).toFixed(1)}%`,
      });
    }
  } finally {
    await emulator.close();
    rmSync(workspace, { recursive: true, force: true });
  }
  const by = (m: string): Record<string, unknown> => rows.find((r) => r['model'] === m)!;
  return {
    name: 'economics-models',
    title: `Cache economics by read multiplier (emulator, ${PREFIX / 1000}K shared tokens, ${FORKS} three-turn forks, cold cache, whole tree)`,
    rows,
    conclusion:
      `The same fan-out saves ${String(by('claude-haiku-5-5')['savings_vs_no_cache'])} at 0.1x (Haiku 5.5, band B), ${String(by('claude-opus-5-5')['savings_vs_no_cache'])} at 0.05x (Opus 5.5) ` +
      `and ${String(by('claude-fable-5-2')['savings_vs_no_cache'])} at 0.025x (Fable 5.2) against no cache; cache efficiency is 1.0 on each, only the price of a read changes. ${BENCH_BASELINES_NOTE}`,
  };
}
