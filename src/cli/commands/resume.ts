import { dirname, join } from 'node:path';
import { readJsonFile } from '../../core/util/json-file.ts';
import { SUMMARY_FILE } from '../../core/run-dir/files.ts';
import type { Command } from 'commander';
import { z } from 'zod';
import { latencyNameSchema } from '../../integrations/emulator/latency.ts';
import { ForkEngine } from '../../core/engine/engine.ts';
import { readFanOutDir } from '../../core/run-dir/manifest.ts';
import { locateFanOuts } from '../../core/run-dir/locate.ts';
import { openEndpoint } from '../endpoint.ts';
import { loadCatalogue, type ModelCatalogue } from '../../core/models/catalogue.ts';
import { parseFlags } from '../flags.ts';
import { addFlags, type FlagDef, type FlagKey, flagSchema, RUN_DIR_ARGUMENT } from '../flag-table.ts';
import { terminalPermissionHandler } from '../permission-prompt.ts';
import { engineOptionsOf } from '../../core/engine/manifest-engine.ts';
import { ALL_NOT_DONE, retryFlag } from '../retry-flag.ts';
import { RETRYABLE_STATUSES } from '../../core/util/fork-status.ts';
import { describeSandbox, sandboxLine } from '../../core/tools/sandbox/report.ts';
import { trustFanOutDir } from '../../core/run-dir/run-trust.ts';
import { distributedFor, HOSTS_SANDBOX_LINE } from '../distributed-run.ts';
import { requireFeatures } from '../optional-features.ts';
import { integrationOf } from '../integration-settings.ts';
import { driveAll, type OutputSink, type Pass, terminalSink } from './fan-out.ts';

/** The flags of `resume`, in `--help`'s order: `run`'s that a manifest does not already answer. */
const RESUME_FLAGS = [
  'api',
  'provider',
  'json',
  'modelTable',
  'redis',
  'redisTimeoutMs',
  'maxUsd',
  'integrationCheck',
  'allowAsks',
  'report',
] as const satisfies readonly FlagKey[];

/** `--retry` and `--trust-unsigned`: `resume`'s alone. */
const RETRY_FLAG = {
  spec: '--retry <statuses>',
  description: `also re-run forks that ended in these statuses (comma-separated: ${RETRYABLE_STATUSES.join(', ')}; or ${ALL_NOT_DONE}): each continues its conversation with a turn asking it to do its directive again`,
  schema: retryFlag,
  justification: 'which forks of a finished run go again: a question about the run, not a setting of its plan',
} as const satisfies FlagDef;
const TRUST_UNSIGNED_FLAG = {
  spec: '--trust-unsigned',
  description:
    "resume a run directory this machine's forkcache did not sign (an older forkcache's, or another machine's) as it is, signing it (docs/security.md)",
  schema: z.boolean().default(false),
  justification: "this machine's trust in a run directory it did not write",
} as const satisfies FlagDef;

export const resumeOptionsSchema = flagSchema(RESUME_FLAGS).extend({
  retry: RETRY_FLAG.schema,
  trustUnsigned: TRUST_UNSIGNED_FLAG.schema,
});
type ResumeOptions = z.output<typeof resumeOptionsSchema>;

// a run without the emulator block (older versions) gets the model that acts on directives
const emulatorMeta = z
  .object({ script: z.string().default('refactor'), latency: latencyNameSchema.default('fast') })
  .default({ script: 'refactor', latency: 'fast' });

/** The cap a resumed run keeps (`--max-usd` replaces the recorded one; it counts every pass). */
const maxUsdOf = (cap: number | undefined): { maxUsd?: number } => (cap === undefined ? {} : { maxUsd: cap });

/** Register `forkcache resume RUN_DIR`. */
export function registerResumeCommand(program: Command): void {
  const command = program
    .command('resume')
    .description(
      'continue every unfinished fork of a run from its last complete turn (completed forks are not re-run); --retry runs forks that ended not done again',
    )
    .argument(RUN_DIR_ARGUMENT.name, RUN_DIR_ARGUMENT.description);
  addFlags(command, RESUME_FLAGS.slice(0, 3), { api: 'auto' });
  command.option(RETRY_FLAG.spec, RETRY_FLAG.description);
  addFlags(command, RESUME_FLAGS.slice(3));
  command.option(TRUST_UNSIGNED_FLAG.spec, TRUST_UNSIGNED_FLAG.description);
  command.action(async (runDir: string, raw: Record<string, unknown>) => {
    process.exitCode = await resumeAction(runDir, parseFlags(resumeOptionsSchema, raw), terminalSink);
  });
}

/**
 * `forkcache resume RUN_DIR`: `run` from a manifest. Each fan-out of the directory is started
 * again from its manifest and driven to its end as `run` drives a plan's (fan-out.ts).
 */
export async function resumeAction(runDir: string, opts: ResumeOptions, sink: OutputSink): Promise<number> {
  // what --report and --redis need is checked before anything starts (exit 1 naming it)
  await requireFeatures(
    opts.report !== undefined && opts.report !== false && 'report',
    opts.redis !== undefined && 'distributed',
  );
  const catalogue = loadCatalogue(opts.modelTable);
  return driveAll(
    async function* (ctl) {
      void ctl.handle;
      for (const dir of locateFanOuts(runDir, 'INVALID_RUN_DIR'))
        yield await passFromManifest(dir, opts, catalogue, sink);
    },
    opts,
    sink,
  );
}

/** One fan-out of a run directory started again from its manifest. */
async function passFromManifest(
  dir: string,
  opts: ResumeOptions,
  catalogue: ModelCatalogue,
  sink: OutputSink,
): Promise<Pass> {
  // what the run directory says is trusted only once its signatures verify
  for (const adopted of trustFanOutDir(dir, { trustUnsigned: opts.trustUnsigned }))
    sink.err(`note: --trust-unsigned: ${dir}: ${adopted}; now signed with this machine's key`);
  const { manifest } = readFanOutDir(dir);
  const emulator = emulatorMeta.safeParse((manifest.meta as { emulator?: unknown }).emulator).data ?? {
    script: 'refactor',
    latency: 'fast' as const,
  };
  // the sandbox the resumed forks really get (the manifest's settings, on this machine)
  if (manifest.engine.allow.includes('bash'))
    sink.err(
      opts.redis
        ? HOSTS_SANDBOX_LINE
        : sandboxLine(
            describeSandbox(manifest.engine.sandbox, {
              network: manifest.engine.network,
              limits: manifest.engine.toolLimits,
              isolation: manifest.engine.isolation,
            }),
          ),
    );
  const provider = opts.provider ?? manifest.prefix.provider;
  const target = await openEndpoint(opts.api, emulator, catalogue, provider);
  const distributed = await distributedFor(opts, target);
  sink.err(`forkcache resume: ${manifest.fanoutId} (${manifest.directives.length} forks) against ${target.label}`);
  const cap = capLine(dir, opts.maxUsd, manifest.engine.maxUsd);
  if (cap) sink.err(cap);
  const engine = await ForkEngine.create({
    provider,
    baseURL: target.baseURL,
    apiKey: target.apiKey,
    ...engineOptionsOf(manifest.engine),
    onPermission: terminalPermissionHandler({ allowAll: opts.allowAsks }),
    ...maxUsdOf(opts.maxUsd ?? manifest.engine.maxUsd),
    runsDir: dirname(dir),
    modelTable: catalogue,
    pool: { maxThreads: 2 },
    ...(distributed ? { distributed } : {}),
  }).catch(async (err: unknown) => {
    await target.close();
    throw err;
  });
  const fan = engine.resume(dir, { retry: opts.retry });
  return {
    engine,
    target,
    fan,
    dir,
    model: fan.prefix.snapshot.model,
    catalogue,
    integration: integrationOf(manifest, opts.integrationCheck),
    json: { api: target.kind, fanout: manifest.fanoutId },
  };
}

/**
 * What a resumed run's spend cap is, and where it comes from: the cap counts every pass, so
 * a run stopped at its cap goes on only under a higher one.
 */
function capLine(dir: string, flag: number | undefined, recorded: number | undefined): string | undefined {
  const cap = flag ?? recorded;
  if (cap === undefined) return undefined;
  const from = flag === undefined ? 'the cap the run was started with' : '--max-usd';
  const last = readSpendCap(dir);
  const spent = last ? `; $${last.spent_usd.toFixed(4)} spent by the last pass's count` : '';
  const low =
    last && last.stopped && cap <= last.max_usd
      ? `: it stopped the run before, so nothing more fits (--max-usd ${(last.next_max_usd ?? cap * 2).toFixed(2)} should finish it)`
      : '';
  return `forkcache resume: spend cap $${cap} (${from}), counting every pass${spent}${low}`;
}

/** The last pass's `spend_cap` from the fan-out's summary.json, if there is one. */
function readSpendCap(
  dir: string,
): { max_usd: number; spent_usd: number; stopped: boolean; next_max_usd?: number | null } | undefined {
  try {
    const summary = readJsonFile(join(dir, SUMMARY_FILE), 'summary') as { spend_cap?: unknown };
    const cap = summary.spend_cap as { max_usd?: unknown; spent_usd?: unknown; stopped?: unknown } | null | undefined;
    if (!cap || typeof cap.max_usd !== 'number' || typeof cap.spent_usd !== 'number') return undefined;
    return cap as { max_usd: number; spent_usd: number; stopped: boolean; next_max_usd?: number | null };
  } catch {
    return undefined;
  }
}
