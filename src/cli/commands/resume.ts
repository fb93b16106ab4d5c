import { dirname, join } from 'node:path';
import { readJsonFile } from '../../core/util/json-file.ts';
import { SUMMARY_FILE } from '../../core/run-dir/files.ts';
import type { Command } from 'commander';
import { z } from 'zod';
import { latencyNameSchema } from '../../integrations/emulator/latency.ts';
import { ForkEngine } from '../../core/engine/engine.ts';
import { readFanOutDir } from '../../core/run-dir/manifest.ts';
import { locateFanOuts } from '../../core/run-dir/locate.ts';
import { API_CHOICES, openEndpoint } from '../endpoint.ts';
import { PROVIDER_IDS, providerIdSchema } from '../../core/wire/providers.ts';
import { loadCatalogue } from '../../core/models/catalogue.ts';
import { parseFlags, usdFlag } from '../flags.ts';
import { maxUsdMessage } from '../output/max-usd-line.ts';
import { SPEND_CAP_EXIT_CODE, spendCapMessage } from '../output/budget-line.ts';
import { terminalPermissionHandler } from '../permission-prompt.ts';
import { engineOptionsOf } from '../../core/engine/manifest-engine.ts';
import { cancelOnInterrupt, INTERRUPTED_EXIT_CODE, interruptedLine } from '../interrupt.ts';
import { forkRowsInSummary } from '../board/summary-rows.ts';
import { ProgressBoard } from '../board/progress-board.ts';
import {
  editsNotApplied,
  formatFanOutResult,
  jsonSummary,
  notDoneMessage,
  notDoneForks,
} from '../output/summary-table.ts';
import { ALL_NOT_DONE, retryFlag } from '../retry-flag.ts';
import { RETRYABLE_STATUSES } from '../../core/util/fork-status.ts';
import { describeSandbox, sandboxLine } from '../../core/tools/sandbox/report.ts';
import { reportAfterRun, reportFlag } from './report.ts';
import { trustFanOutDir } from '../../core/run-dir/run-trust.ts';
import { closeAll, settledOrForks } from '../output/fan-out-ending.ts';
import {
  distributedFor,
  hostSandboxLines,
  HOSTS_SANDBOX_LINE,
  REDIS_FLAG_HELP,
  redisFlags,
  redisLostLine,
} from '../distributed-run.ts';
import { printOut, printErr } from '../terminal-safe.ts';
import { requireFeatures } from '../optional-features.ts';
import { integrateAfterRun } from '../integrate/after-run.ts';
import { integratedStatusOf, integrationExitCode, integrationLines, withIntegration } from '../integrate/report.ts';
import { integrationOf } from '../integration-settings.ts';

const optionsSchema = z.object({
  api: z.enum(API_CHOICES, { error: `expected ${API_CHOICES.join(', ')}` }).default('auto'),
  provider: providerIdSchema.optional(),
  json: z.boolean().default(false),
  allowAsks: z.boolean().default(false),
  modelTable: z.string().min(1).optional(),
  retry: retryFlag,
  trustUnsigned: z.boolean().default(false),
  maxUsd: usdFlag.optional(),
  report: reportFlag,
  integrationCheck: z.string().trim().min(1, 'expected a shell command').optional(),
  ...redisFlags,
});

// a run without the emulator block (older versions) gets the model that acts on directives
const emulatorMeta = z
  .object({ script: z.string().default('refactor'), latency: latencyNameSchema.default('fast') })
  .default({ script: 'refactor', latency: 'fast' });

/** The cap a resumed run keeps (`--max-usd` replaces the recorded one; it counts every pass). */
const maxUsdOf = (cap: number | undefined): { maxUsd?: number } => (cap === undefined ? {} : { maxUsd: cap });

/** Register `forkcache resume RUN_DIR`. */
export function registerResumeCommand(program: Command): void {
  program
    .command('resume')
    .description(
      'continue every unfinished fork of a run from its last complete turn (completed forks are not re-run); --retry runs forks that ended not done again',
    )
    .argument('<run-dir>', 'a run directory, or a runs directory holding several')
    .option('--api <target>', 'auto | real (alias anthropic) | emulator (as for run)', 'auto')
    .option(
      '--provider <name>',
      `${PROVIDER_IDS.join(' | ')}: must be the one the run was frozen for (default: the run's)`,
    )
    .option('--json', 'print one JSON summary object per fan-out, last')
    .option(
      '--retry <statuses>',
      `also re-run forks that ended in these statuses (comma-separated: ${RETRYABLE_STATUSES.join(', ')}; or ${ALL_NOT_DONE}): each continues its conversation with a turn asking it to do its directive again`,
    )
    .option('--model-table <file>', 'model catalogue JSON merged over the built-in one (as for run)')
    .option('--redis <url>', REDIS_FLAG_HELP.redis)
    .option('--redis-timeout-ms <n>', REDIS_FLAG_HELP.timeout)
    .option(
      '--max-usd <usd>',
      "the run's spend cap, counting what every pass spent (default: the cap the run was started with)",
    )
    .option(
      '--integration-check <command>',
      "after the forks end, merge them in an integration worktree and run this there (overrides the run's integrationCheck)",
    )
    .option(
      '--allow-asks',
      "answer yes to the run's `ask` permissions (otherwise: a y/N prompt on a terminal, no elsewhere)",
    )
    .option('--report [file]', 'write the HTML report of the run after it (default: report.html in the run directory)')
    .option(
      '--trust-unsigned',
      "resume a run directory this machine's forkcache did not sign (an older forkcache's, or another machine's) as it is, signing it (docs/security.md)",
    )
    .action(async (runDir: string, raw: Record<string, unknown>) => {
      const opts = parseFlags(optionsSchema, raw);
      // what --report and --redis need is checked before anything starts (exit 1 naming it)
      await requireFeatures(
        opts.report !== undefined && opts.report !== false && 'report',
        opts.redis !== undefined && 'distributed',
      );
      const catalogue = loadCatalogue(opts.modelTable);
      let failed = 0;
      // each integrated fan-out's exit code (exit-codes.ts): the worst one is the command's
      const codes: number[] = [];
      let spendCap = false;
      // the engine of the fan-out being resumed: what a stuck Ctrl-C stops
      let current: ForkEngine | undefined;
      let board: ProgressBoard | undefined;
      const interrupt = cancelOnInterrupt((line) => (board ? board.log(line) : void printErr(`${line}\n`)), {
        stop: async () => current?.destroy(),
      });
      for (const dir of locateFanOuts(runDir, 'INVALID_RUN_DIR')) {
        // what the run directory says is trusted only once its signatures verify
        for (const adopted of trustFanOutDir(dir, { trustUnsigned: opts.trustUnsigned }))
          printErr(`note: --trust-unsigned: ${dir}: ${adopted}; now signed with this machine's key\n`);
        const { manifest } = readFanOutDir(dir);
        const emulator = emulatorMeta.safeParse((manifest.meta as { emulator?: unknown }).emulator).data ?? {
          script: 'refactor',
          latency: 'fast' as const,
        };
        // the sandbox the resumed forks really get (the manifest's settings, on this machine)
        if (manifest.engine.allow.includes('bash'))
          printErr(
            `${opts.redis ? HOSTS_SANDBOX_LINE : sandboxLine(describeSandbox(manifest.engine.sandbox, { network: manifest.engine.network, limits: manifest.engine.toolLimits, isolation: manifest.engine.isolation }))}\n`,
          );
        const provider = opts.provider ?? manifest.prefix.provider;
        const target = await openEndpoint(opts.api, emulator, catalogue, provider);
        const distributed = await distributedFor(opts, target);
        printErr(
          `forkcache resume: ${manifest.fanoutId} (${manifest.directives.length} forks) against ${target.label}\n`,
        );
        const cap = capLine(dir, opts.maxUsd, manifest.engine.maxUsd);
        if (cap) printErr(`${cap}\n`);
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
        current = engine;
        try {
          const fan = engine.resume(dir, { retry: opts.retry });
          interrupt.watch(fan);
          board = new ProgressBoard({
            model: fan.prefix.snapshot.model,
            plain: opts.json,
            catalogue,
            budget: () => engine.admission,
          });
          board.plan(fan);
          for await (const event of fan) board.onEvent(event);
          board.stop();
          board = undefined;
          const result = await settledOrForks(fan, dir, (line) => void printErr(`${line}\n`));
          const settings = integrationOf(manifest, opts.integrationCheck);
          const integrated =
            settings && !interrupt.interrupted
              ? await integrateAfterRun(dir, settings, engine, catalogue, (line) => void printErr(`${line}\n`))
              : undefined;
          // an integrated run is judged by its integration (its local checks' failures are advisory)
          if (integrated) codes.push(integrationExitCode(integrated));
          else failed += notDoneForks(result).length;
          failed += editsNotApplied(result).length;
          if (result.summary.cost_error !== null) {
            failed += 1;
            printErr(`${result.summary.cost_error}\n`);
          }
          if (result.summary.spend_cap?.stopped) spendCap = true;
          const report = await reportAfterRun(dir, opts.report, (line) => void printErr(`${line}\n`), catalogue);
          if (report.failed) failed += 1;
          for (const line of hostSandboxLines(result)) printErr(`${line}\n`);
          const lost = redisLostLine(result, opts.redis);
          if (lost) printErr(`${lost}\n`);
          if (result.summary.rate_limits.stopped !== null) {
            spendCap = true;
            printErr(
              `${spendCapMessage(dir, result.forks.filter((f) => f.error?.code === 'RATE_LIMIT_SPEND_CAP').length)}\n`,
            );
          }
          if (opts.json) {
            const json = jsonSummary(result, { api: target.kind, fanout: manifest.fanoutId });
            printOut(`${JSON.stringify(integrated ? withIntegration(json, integrated) : json)}\n`);
          } else
            printOut(
              `\n${formatFanOutResult(result, fan.prefix.snapshot.model, catalogue, { forkRows: forkRowsInSummary(opts.json), ...(integrated ? { statusOf: integratedStatusOf(integrated) } : {}) })}\n${integrated ? `${integrationLines(integrated).join('\n')}\n` : ''}`,
            );
          const hint = interrupt.interrupted ? interruptedLine(result) : undefined;
          for (const line of notDoneMessage(result, {
            listed: !opts.json,
            interrupted: hint !== undefined,
            statusOf: integrated ? integratedStatusOf(integrated) : undefined,
          }))
            printErr(`${line}\n`);
          // the one command that goes on under the cap, after the forks it stopped
          if (result.summary.spend_cap?.stopped) printErr(`${maxUsdMessage(dir, result.summary.spend_cap)}\n`);
          // the resume command is the last line after Ctrl-C
          if (hint) printErr(`${hint}\n`);
        } finally {
          await closeAll(engine, target);
        }
      }
      interrupt.dispose();
      process.exitCode = interrupt.interrupted
        ? INTERRUPTED_EXIT_CODE
        : spendCap
          ? SPEND_CAP_EXIT_CODE
          : failed > 0
            ? 1
            : Math.max(0, ...codes);
    });
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
