import type { Command } from 'commander';
import { z } from 'zod';
import { ForkEngine } from '../../engine/engine.ts';
import { API_CHOICES, openEndpoint } from '../endpoint.ts';
import { PROVIDER_IDS, providerIdSchema } from '../../wire/providers.ts';
import { parseFlags } from '../flags.ts';
import { cancelOnInterrupt, INTERRUPTED_EXIT_CODE } from '../interrupt.ts';
import type { PermissionPolicy } from '../../tools/permissions.ts';
import { terminalPermissionHandler } from '../permission-prompt.ts';
import { loadPlan } from '../plan.ts';
import { modelCheck } from '../model-check.ts';
import { resolveSandbox, UNSANDBOXED_NOTE } from '../../tools/sandbox.ts';
import { ProgressBoard } from '../progress-board.ts';
import { editsNotApplied, formatFanOutResult, jsonSummary } from '../summary-table.ts';
import { reportAfterRun, reportFlag } from './report.ts';
import { CacheContinuity } from '../cache-continuity.ts';
import { SPEND_CAP_EXIT_CODE, spendCapMessage } from '../budget-line.ts';

const optionsSchema = z.object({
  api: z.enum(API_CHOICES, { error: `expected ${API_CHOICES.join(', ')}` }).default('auto'),
  provider: providerIdSchema.optional(),
  model: z.string().min(1).optional(),
  json: z.boolean().default(false),
  parentFromClaudeTranscript: z.string().min(1, 'expected a .jsonl file').optional(),
  report: reportFlag,
  allowAsks: z.boolean().default(false),
  redis: z
    .string()
    .regex(/^rediss?:\/\//, 'expected a redis:// URL')
    .optional(),
  modelTable: z.string().min(1).optional(),
});

/** Register `forkcache run PLAN.json`. */
export function registerRunCommand(program: Command): void {
  program
    .command('run')
    .description('fan out the directives of a plan file over its parent snapshot')
    .argument('<plan>', 'plan JSON file: { parent, directives, workspace?, model?, warm?, layout?, limits?, allow? }')
    .option(
      '--api <target>',
      "auto (the provider's real API when its key is set, else the emulator) | real (alias anthropic) | emulator",
      'auto',
    )
    .option('--provider <name>', `the API the forks speak: ${PROVIDER_IDS.join(' | ')} (overrides the plan's provider)`)
    .option('--model <id>', "model of every fork (overrides the plan's model and the parent's)")
    .option('--json', 'print one JSON summary object last')
    .option(
      '--parent-from-claude-transcript <file>',
      'rebuild the parent from a Claude Code session transcript (.jsonl); the plan then has no "parent"',
    )
    .option('--report [file]', 'write the HTML report of the run (default: report.html in the fan-out directory)')
    .option(
      '--redis <url>',
      'run the forks on `forkcache worker` hosts through BullMQ on this Redis instead of local threads',
    )
    .option(
      '--model-table <file>',
      "model catalogue JSON merged over the built-in one (prices a model forkcache does not know; overrides the plan's modelTable)",
    )
    .option(
      '--allow-asks',
      "answer yes to the plan's `ask` permissions (otherwise: a y/N prompt on a terminal, no elsewhere)",
    )
    .action(async (planPath: string, raw: Record<string, unknown>) => {
      const opts = parseFlags(optionsSchema, raw);
      const { plan, snapshot, workspace, runDir, notes, modelTable, expectedCachedTokens, fromTranscript } = loadPlan(
        planPath,
        { claudeTranscript: opts.parentFromClaudeTranscript, model: opts.model },
      );
      const provider = opts.provider ?? plan.provider;
      const continuity = fromTranscript ? new CacheContinuity(expectedCachedTokens) : undefined;
      const log = (line: string): void => void process.stderr.write(`${line}\n`);
      for (const note of notes) log(`parent: ${note}`);
      const catalogue = modelCheck(snapshot.model, opts.modelTable ?? modelTable, log, Date.now(), provider);
      if (plan.allow?.includes('bash') && resolveSandbox(plan.sandbox) === 'none') log(`note: ${UNSANDBOXED_NOTE}`);
      const target = await openEndpoint(opts.api, plan.emulator, catalogue, provider);
      log(`forkcache run: ${plan.directives.length} forks of ${snapshot.model} against ${target.label}`);
      // a setup error must not leave the embedded emulator holding the process open
      const engine = await ForkEngine.create({
        provider,
        baseURL: target.baseURL,
        apiKey: target.apiKey,
        workspace,
        runDir,
        modelTable: catalogue,
        warm: plan.warm,
        layout: plan.layout,
        ...(plan.allow ? { allow: plan.allow } : {}),
        ...(plan.limits.maxTurns ? { maxTurns: plan.limits.maxTurns } : {}),
        ...(plan.limits.maxTokens ? { maxTokens: plan.limits.maxTokens } : {}),
        ...(plan.limits.concurrency ? { concurrency: plan.limits.concurrency } : {}),
        pool: { maxThreads: plan.limits.maxThreads ?? 2 },
        ...(plan.permissions
          ? {
              permissions: plan.permissions as PermissionPolicy,
              onPermission: terminalPermissionHandler({ allowAll: opts.allowAsks }),
            }
          : {}),
        sandbox: plan.sandbox,
        ...(plan.isolation === 'worktree' ? { isolation: 'worktree' as const } : {}),
        ...(opts.redis ? { distributed: { redis: opts.redis } } : {}),
      }).catch(async (err: unknown) => {
        await target.close();
        throw err;
      });
      const interrupt = cancelOnInterrupt(log, { stop: () => engine.destroy() });
      try {
        // the manifest remembers the emulator script, so `forkcache resume` answers the same way
        const fan = engine.fanOut(snapshot, plan.directives, { meta: { emulator: plan.emulator } });
        interrupt.watch(fan);
        const board = new ProgressBoard({
          model: snapshot.model,
          plain: opts.json,
          catalogue,
          budget: () => engine.admission,
        });
        for await (const event of fan) {
          board.onEvent(event);
          continuity?.onEvent(event as Parameters<CacheContinuity['onEvent']>[0]);
        }
        board.stop();
        if (continuity) log(continuity.line());
        const result = await fan.settled();
        const report = await reportAfterRun(result.summary.run_dir, opts.report, log, catalogue);
        const extra = {
          api: target.kind,
          ...(interrupt.interrupted ? { interrupted: true } : {}),
          ...(report.path ? { report: report.path } : {}),
          ...(continuity ? { parent_cache: continuity.json() } : {}),
        };
        if (opts.json) process.stdout.write(`${JSON.stringify(jsonSummary(result, extra))}\n`);
        else process.stdout.write(`\n${formatFanOutResult(result, snapshot.model, catalogue)}\n`);
        const spendCap = result.summary.rate_limits.stopped !== null;
        if (spendCap)
          log(
            spendCapMessage(
              result.summary.run_dir,
              result.forks.filter((f) => f.error?.code === 'RATE_LIMIT_SPEND_CAP').length,
            ),
          );
        // an edit a fork could not apply is lost work: never a silent 0
        const clean =
          result.forks.every((f) => f.status === 'completed') && editsNotApplied(result).length === 0 && !report.failed;
        process.exitCode = interrupt.interrupted
          ? INTERRUPTED_EXIT_CODE
          : spendCap
            ? SPEND_CAP_EXIT_CODE
            : clean
              ? 0
              : 1;
      } finally {
        interrupt.dispose();
        await engine.close();
        await target.close();
      }
    });
}
