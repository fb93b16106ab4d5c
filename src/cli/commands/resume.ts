import { dirname } from 'node:path';
import type { Command } from 'commander';
import { z } from 'zod';
import { latencyNameSchema } from '../../emulator/latency.ts';
import { ForkEngine } from '../../engine/engine.ts';
import { readFanOutDir } from '../../run-dir/manifest.ts';
import { locateFanOuts } from '../../run-dir/locate.ts';
import type { WarmStrategy } from '../../engine/warm-gate.ts';
import type { ExecutableToolName } from '../../wire/tool-names.ts';
import { API_CHOICES, openEndpoint } from '../endpoint.ts';
import { PROVIDER_IDS, providerIdSchema } from '../../wire/providers.ts';
import { loadCatalogue } from '../../models/catalogue.ts';
import { parseFlags } from '../flags.ts';
import { SPEND_CAP_EXIT_CODE, spendCapMessage } from '../budget-line.ts';
import { terminalPermissionHandler } from '../permission-prompt.ts';
import type { PermissionPolicy } from '../../tools/permissions.ts';
import { cancelOnInterrupt, INTERRUPTED_EXIT_CODE } from '../interrupt.ts';
import { ProgressBoard } from '../progress-board.ts';
import { resolveSandbox, UNSANDBOXED_NOTE } from '../../tools/sandbox.ts';
import { editsNotApplied, formatFanOutResult, jsonSummary } from '../summary-table.ts';
import { distributedFor, REDIS_FLAG_HELP, redisFlags, redisLostLine } from '../distributed-run.ts';

const optionsSchema = z.object({
  api: z.enum(API_CHOICES, { error: `expected ${API_CHOICES.join(', ')}` }).default('auto'),
  provider: providerIdSchema.optional(),
  json: z.boolean().default(false),
  allowAsks: z.boolean().default(false),
  modelTable: z.string().min(1).optional(),
  ...redisFlags,
});

const emulatorMeta = z
  .object({ script: z.string().default('echo'), latency: latencyNameSchema.default('fast') })
  .default({ script: 'echo', latency: 'fast' });

/** Register `forkcache resume RUN_DIR`. */
export function registerResumeCommand(program: Command): void {
  program
    .command('resume')
    .description('continue every unfinished fork of a run from its last complete turn (completed forks are not re-run)')
    .argument('<run-dir>', 'a fan-out directory, or a runs directory holding several')
    .option('--api <target>', 'auto | real (alias anthropic) | emulator (as for run)', 'auto')
    .option(
      '--provider <name>',
      `${PROVIDER_IDS.join(' | ')}: must be the one the run was frozen for (default: the run's)`,
    )
    .option('--json', 'print one JSON summary object per fan-out, last')
    .option('--model-table <file>', 'model catalogue JSON merged over the built-in one (as for run)')
    .option('--redis <url>', REDIS_FLAG_HELP.redis)
    .option('--redis-timeout-ms <n>', REDIS_FLAG_HELP.timeout)
    .option(
      '--allow-asks',
      "answer yes to the run's `ask` permissions (otherwise: a y/N prompt on a terminal, no elsewhere)",
    )
    .action(async (runDir: string, raw: Record<string, unknown>) => {
      const opts = parseFlags(optionsSchema, raw);
      const catalogue = loadCatalogue(opts.modelTable);
      let failed = 0;
      let spendCap = false;
      // the engine of the fan-out being resumed: what a stuck Ctrl-C stops
      let current: ForkEngine | undefined;
      const interrupt = cancelOnInterrupt((line) => void process.stderr.write(`${line}\n`), {
        stop: async () => current?.destroy(),
      });
      for (const dir of locateFanOuts(runDir, 'INVALID_ARGUMENT')) {
        const { manifest } = readFanOutDir(dir);
        const emulator = emulatorMeta.safeParse((manifest.meta as { emulator?: unknown }).emulator).data ?? {
          script: 'echo',
          latency: 'fast' as const,
        };
        if (manifest.engine.allow.includes('bash') && resolveSandbox(manifest.engine.sandbox) === 'none')
          process.stderr.write(`note: ${UNSANDBOXED_NOTE}\n`);
        const provider = opts.provider ?? manifest.prefix.provider;
        const target = await openEndpoint(opts.api, emulator, catalogue, provider);
        const distributed = await distributedFor(opts, target);
        process.stderr.write(
          `forkcache resume: ${manifest.fanoutId} (${manifest.directives.length} forks) against ${target.label}\n`,
        );
        const engine = await ForkEngine.create({
          provider,
          baseURL: target.baseURL,
          apiKey: target.apiKey,
          headers: manifest.engine.headers,
          workspace: manifest.engine.workspace,
          maxTurns: manifest.engine.maxTurns,
          maxTokens: manifest.engine.maxTokens,
          allow: manifest.engine.allow as ExecutableToolName[],
          warm: manifest.engine.warm as WarmStrategy,
          permissions: manifest.engine.permissions as PermissionPolicy,
          onPermission: terminalPermissionHandler({ allowAll: opts.allowAsks }),
          isolation: manifest.engine.isolation,
          toolLimits: manifest.engine.toolLimits,
          sandbox: manifest.engine.sandbox,
          ...(manifest.engine.turnRetry ? { turnRetry: manifest.engine.turnRetry } : {}),
          ...(manifest.engine.concurrency ? { concurrency: manifest.engine.concurrency } : {}),
          runDir: dirname(dir),
          modelTable: catalogue,
          pool: { maxThreads: 2 },
          ...(distributed ? { distributed } : {}),
        }).catch(async (err: unknown) => {
          await target.close();
          throw err;
        });
        current = engine;
        try {
          const fan = engine.resume(dir);
          interrupt.watch(fan);
          const board = new ProgressBoard({
            model: fan.prefix.snapshot.model,
            plain: opts.json,
            catalogue,
            budget: () => engine.admission,
          });
          for await (const event of fan) board.onEvent(event);
          board.stop();
          const result = await fan.settled();
          failed += result.forks.filter((f) => f.status !== 'completed').length + editsNotApplied(result).length;
          const lost = redisLostLine(result, opts.redis);
          if (lost) process.stderr.write(`${lost}\n`);
          if (result.summary.rate_limits.stopped !== null) {
            spendCap = true;
            process.stderr.write(
              `${spendCapMessage(dir, result.forks.filter((f) => f.error?.code === 'RATE_LIMIT_SPEND_CAP').length)}\n`,
            );
          }
          if (opts.json)
            process.stdout.write(
              `${JSON.stringify(jsonSummary(result, { api: target.kind, fanout: manifest.fanoutId }))}\n`,
            );
          else process.stdout.write(`\n${formatFanOutResult(result, fan.prefix.snapshot.model, catalogue)}\n`);
        } finally {
          await engine.close();
          await target.close();
        }
      }
      interrupt.dispose();
      process.exitCode = interrupt.interrupted
        ? INTERRUPTED_EXIT_CODE
        : spendCap
          ? SPEND_CAP_EXIT_CODE
          : failed === 0
            ? 0
            : 1;
    });
}
