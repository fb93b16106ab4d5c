import type { ManualClock } from '../src/core/util/clock.ts';
import type { EmulatorApi } from '../src/integrations/emulator/openai/rules.ts';
import { startEmulator } from '../src/integrations/emulator/start.ts';
import { ForkEngine } from '../src/index.ts';
import { withBenchOptions } from '../src/core/engine/bench-options.ts';
import type { WarmStrategy } from '../src/core/settings/engine-settings.ts';
import { SCRIPT_HEADER } from '../src/integrations/emulator/scripts/types.ts';
import type { ParentSnapshot } from '../src/core/fork/snapshot.ts';
import type { MarkerStrategy } from '../src/core/prefix/freeze.ts';
import { stepDown } from '../src/core/wire/providers.ts';
import { PROVIDERS as ADAPTERS } from '../src/providers/registry.ts';
import { driveFanOut, type DrivenResult } from './support/drive.ts';
import { SURVEY_SCRIPT, surveyModel } from './support/survey-model.ts';

/** The two Chat Completions providers of the sweep, each on its own emulator mode and model. */
const PROVIDERS = [
  { provider: 'dashscope', api: 'dashscope', label: 'dashscope (explicit)', layout: 'qwen' },
  { provider: 'openai', api: 'openai', label: 'openai (automatic)', layout: 'claude' },
] as const;

export type ArmName = 'forkcache' | 'fork-naive';

/**
 * The arms on these providers: forkcache warms once (the warm-up also measures the prefix);
 * fork-naive sends every child at once with only its own marker. No no-cache arm: OpenAI's
 * automatic cache cannot be switched off, so the reference is the ledger's `no_cache` baseline
 * (the same requests at the base price) of the fork-naive run.
 */
const ARMS: Readonly<Record<ArmName, { markers: MarkerStrategy; warm: WarmStrategy }>> = {
  forkcache: { markers: 'boundary', warm: 'first-child' },
  'fork-naive': { markers: 'last-only', warm: 'none' },
};

export interface ProviderCell {
  provider: string;
  prefix: number;
  forks: number;
  arm: ArmName;
  run: DrivenResult;
  /** Shared tokens as the forkcache arm's warm-up measured them (the same head for every arm of the cell; none for one fork). */
  sharedTokens: number | undefined;
  /** Every request of the fork-naive run at the base price: what the cell saves against. */
  noCacheUsd: number;
}

/**
 * Cache efficiency of a cold fan-out computed as the ledger defines it, from the forks' first
 * requests: reads within the shared prefix over what N requests could read once one has
 * written it (the shared tokens rounded down to the provider's read step). Used for every arm
 * so the arms compare on one measure: a Chat fan-out without a warm-up has no token count of
 * its own (the API has no count endpoint), so its ledger cannot know the shared size.
 */
function coldEfficiency(provider: 'dashscope' | 'openai', run: DrivenResult, shared: number): number {
  const readable = stepDown(ADAPTERS[provider].cacheStepTokens, shared);
  const firsts = run.forks.map((f) => f.requests[0]!.usage.cache_read_input_tokens);
  const warmup = run.summary.warmups > 0 ? 1 : 0;
  const max = readable * (firsts.length + warmup - 1);
  const reads = firsts.reduce((sum, r) => sum + Math.min(r, readable), 0);
  return max === 0 ? 1 : reads / max;
}

/**
 * The provider axis of the economics sweep: the same parents (retargeted to each provider's
 * catalogue model), the same survey forks, on the emulator in DashScope's explicit-marker mode
 * (readable after completion, writes 1.25×) and OpenAI's automatic mode (128-token steps,
 * writes free), every cell from a cold cache on emulated time.
 */
export async function providerCells(
  clock: ManualClock,
  parents: ReadonlyMap<string, ParentSnapshot>,
  prefixes: readonly number[],
  sizes: readonly number[],
  workspace: string,
  seed: number,
): Promise<(ProviderCell & { efficiency: number })[]> {
  const out: (ProviderCell & { efficiency: number })[] = [];
  for (const p of PROVIDERS) {
    const emulator = await startEmulator({
      latency: 'realistic',
      clock,
      seed,
      api: p.api as EmulatorApi,
      scripts: { [SURVEY_SCRIPT]: surveyModel },
    });
    try {
      for (const prefix of prefixes) {
        for (const n of sizes) {
          const snapshot: ParentSnapshot = {
            ...parents.get(`${prefix}/${n}`)!,
            model: ADAPTERS[p.provider].defaultModel!,
          };
          const directives = Array.from({ length: n }, (_, i) => `survey part ${i + 1} of ${n} and report`);
          const runs = new Map<ArmName, DrivenResult>();
          for (const [arm, s] of Object.entries(ARMS) as [ArmName, (typeof ARMS)[ArmName]][]) {
            const engine = await ForkEngine.create(
              withBenchOptions(
                {
                  provider: p.provider,
                  baseURL: `${emulator.url}/v1`,
                  apiKey: 'bench',
                  headers: { [SCRIPT_HEADER]: SURVEY_SCRIPT },
                  maxRetries: 0,
                  workspace,
                  warm: s.warm,
                  layout: p.layout,
                  clock,
                  concurrency: 64,
                  pool: { maxThreads: 2, concurrentTasksPerWorker: Math.max(...sizes) },
                },
                { markers: s.markers },
              ),
            );
            try {
              emulator.clearCache();
              // a Chat warm-up goes out before any fork starts, as a pre-warm does
              const run = await driveFanOut(clock, emulator, () => engine.fanOut(snapshot, directives), {
                forks: n,
                warm: s.warm === 'none' ? 'none' : 'prewarm',
              });
              const failed = run.forks.filter((f) => f.status !== 'completed');
              if (failed.length > 0)
                throw new Error(
                  `economics: ${p.provider} ${arm} N=${n} prefix=${prefix}: ${failed.length} fork(s) ${failed[0]!.status}: ${failed[0]!.error?.message ?? ''}`,
                );
              runs.set(arm, run);
            } finally {
              await engine.close();
            }
          }
          const shared = runs.get('forkcache')!.summary.prefix.shared_tokens ?? undefined;
          const noCacheUsd = runs.get('fork-naive')!.summary.cost_usd.no_cache!;
          for (const [arm, run] of runs)
            out.push({
              provider: p.label,
              prefix,
              forks: n,
              arm,
              run,
              sharedTokens: shared,
              noCacheUsd,
              efficiency: coldEfficiency(p.provider, run, shared ?? 0),
            });
        }
      }
    } finally {
      await emulator.close();
    }
  }
  return out;
}
