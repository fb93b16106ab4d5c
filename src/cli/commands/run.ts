import { join, resolve } from 'node:path';
import { excludeFromGit } from '../../core/tools/git/exclude.ts';
import { wholeWorktreesLine } from '../output/worktree-line.ts';
import type { Command } from 'commander';
import { z } from 'zod';
import { ForkEngine } from '../../core/engine/engine.ts';
import { API_CHOICES, openEndpoint } from '../endpoint.ts';
import {
  OPENAI_WIRES,
  type OpenAiWire,
  PROVIDER_IDS,
  type ProviderId,
  providerIdSchema,
} from '../../core/wire/providers.ts';
import { parseFlags, usdFlag } from '../flags.ts';
import { cancelOnInterrupt, INTERRUPTED_EXIT_CODE, interruptedLine } from '../interrupt.ts';
import { forkRowsInSummary } from '../board/summary-rows.ts';
import type { PermissionPolicy } from '../../core/tools/permissions.ts';
import { terminalPermissionHandler } from '../permission-prompt.ts';
import { loadPlan, type Plan, planSchema, planToolLimits } from '../plan/plan.ts';
import { ForkcacheError } from '../../core/util/errors.ts';
import type { ForkEngineOptions } from '../../core/engine/options.ts';
import { modelCheck } from '../models/model-check.ts';
import { describeSandbox, sandboxLine } from '../../core/tools/sandbox/report.ts';
import { ProgressBoard } from '../board/progress-board.ts';
import {
  editsNotApplied,
  formatFanOutResult,
  jsonSummary,
  notDoneForks,
  notDoneMessage,
} from '../output/summary-table.ts';
import { planFieldsHelp } from '../plan/help.ts';
import { reportAfterRun, reportFlag } from './report.ts';
import { CacheContinuity } from '../importers/cache-continuity.ts';
import { routeMismatch } from '../importers/claude-route.ts';
import { SPEND_CAP_EXIT_CODE, spendCapMessage } from '../output/budget-line.ts';
import { closeAll, settledOrForks } from '../output/fan-out-ending.ts';
import { dryRun } from '../dry-run/dry-run.ts';
import { maxUsdMessage } from '../output/max-usd-line.ts';
import {
  distributedFor,
  hostSandboxLines,
  HOSTS_SANDBOX_LINE,
  REDIS_FLAG_HELP,
  redisFlags,
  redisLostLine,
} from '../distributed-run.ts';
import { printOut, printErr } from '../terminal-safe.ts';
import { toolFlagsOf } from '../../core/tools/tool-flags.ts';
import { requireFeatures } from '../optional-features.ts';
import { integrateAfterRun } from '../integrate/after-run.ts';
import { integratedStatusOf, integrationExitCode, integrationLines, withIntegration } from '../integrate/report.ts';
import { INTEGRATION_META, integrationOfPlan } from '../integration-settings.ts';

const optionsSchema = z.object({
  api: z.enum(API_CHOICES, { error: `expected ${API_CHOICES.join(', ')}` }).default('auto'),
  provider: providerIdSchema.optional(),
  openaiWire: z.enum(OPENAI_WIRES, { error: `expected ${OPENAI_WIRES.join(', ')}` }).optional(),
  model: z.string().min(1).optional(),
  json: z.boolean().default(false),
  parentFromClaudeTranscript: z.string().min(1, 'expected a .jsonl file').optional(),
  report: reportFlag,
  allowAsks: z.boolean().default(false),
  ...redisFlags,
  modelTable: z.string().min(1).optional(),
  dryRun: z.boolean().default(false),
  maxUsd: usdFlag.optional(),
  assume: z.array(z.string()).default([]),
  integrationCheck: z.string().trim().min(1, 'expected a shell command').optional(),
});

/** Register `forkcache run PLAN.json`. */
export function registerRunCommand(program: Command): void {
  program
    .command('run')
    .description('fan out the directives of a plan file over its parent snapshot')
    .argument('<plan>', 'plan JSON file (its fields are listed below; `forkcache plan` writes one)')
    .addHelpText('after', () => `\nPlan fields (docs/plans.md):\n${planFieldsHelp(planSchema)}\n`)
    .option(
      '--api <target>',
      "auto (the provider's real API when its key is set, else the emulator) | real (alias anthropic) | emulator",
      'auto',
    )
    .option('--provider <name>', `the API the forks speak: ${PROVIDER_IDS.join(' | ')} (overrides the plan's provider)`)
    .option(
      '--openai-wire <wire>',
      `with provider openai: the API the forks speak, ${OPENAI_WIRES.join(' | ')} (overrides the plan's openaiWire)`,
    )
    .option('--model <id>', "model of every fork (overrides the plan's model and the parent's)")
    .option('--json', 'print one JSON summary object last')
    .option(
      '--parent-from-claude-transcript <file>',
      'rebuild the parent from a Claude Code session transcript (.jsonl); the plan then has no "parent"',
    )
    .option('--report [file]', 'write the HTML report of the run (default: report.html in the run directory)')
    .option('--redis <url>', REDIS_FLAG_HELP.redis)
    .option('--redis-timeout-ms <n>', REDIS_FLAG_HELP.timeout)
    .option(
      '--model-table <file>',
      "model catalogue JSON merged over the built-in one (prices a model forkcache does not know; overrides the plan's modelTable)",
    )
    .option(
      '--dry-run',
      'estimate the whole run and print the estimate with its assumptions: sends nothing but token counts, writes no run directory',
    )
    .option(
      '--max-usd <usd>',
      "stop admitting turns once the run could cost more than this (overrides the plan's maxUsd)",
    )
    .option(
      '--assume <name=value>',
      'with --dry-run: change a turn assumption (toolCallOutput, editOutput, editResult, reportOutput, verifyRead, turnOverhead)',
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .option(
      '--integration-check <command>',
      "after the forks end, merge them in an integration worktree and run this there (overrides the plan's integrationCheck; needs isolation worktree)",
    )
    .option(
      '--allow-asks',
      "answer yes to the plan's `ask` permissions (otherwise: a y/N prompt on a terminal, no elsewhere)",
    )
    .action(async (planPath: string, raw: Record<string, unknown>) => {
      const opts = parseFlags(optionsSchema, raw);
      // what --report and --redis need is checked before anything starts (exit 1 naming it)
      await requireFeatures(
        !opts.dryRun && opts.report !== undefined && opts.report !== false && 'report',
        !opts.dryRun && opts.redis !== undefined && 'distributed',
      );
      const loaded = loadPlan(planPath, { claudeTranscript: opts.parentFromClaudeTranscript, model: opts.model });
      const { plan, snapshot, workspace, runsDir, notes, modelTable, expectedCachedTokens, fromTranscript } = loaded;
      const provider = opts.provider ?? plan.provider;
      const wire = openAiWireOf(plan, provider, opts.openaiWire);
      const continuity = fromTranscript ? new CacheContinuity(expectedCachedTokens) : undefined;
      const log = (line: string): void => void printErr(`${line}\n`);
      for (const note of notes) log(`parent: ${note}`);
      const catalogue = modelCheck(snapshot.model, opts.modelTable ?? modelTable, log, Date.now(), provider);
      const toolLimits = planToolLimits(plan);
      if (opts.redis && (plan.allow?.includes('bash') || loaded.check)) log(HOSTS_SANDBOX_LINE);
      else if (plan.allow?.includes('bash'))
        log(
          sandboxLine(
            describeSandbox(plan.sandbox, { network: plan.network, limits: toolLimits, isolation: plan.isolation }),
          ),
        );
      const maxUsd = opts.maxUsd ?? plan.maxUsd;
      const integration = integrationOfPlan(loaded, opts.integrationCheck);
      if (opts.dryRun) {
        const { report, text } = await dryRun(loaded, {
          api: opts.api,
          provider,
          catalogue,
          assume: opts.assume,
          maxUsd,
          wire,
        });
        printOut(opts.json ? `${JSON.stringify(report)}\n` : text);
        return;
      }
      const target = await openEndpoint(opts.api, plan.emulator, catalogue, provider);
      const distributed = await distributedFor(opts, target);
      log(`forkcache run: ${plan.directives.length} forks of ${snapshot.model} against ${target.label}`);
      // the session's cache is per endpoint: say when the forks go where it is not
      const elsewhere =
        loaded.route && target.kind === 'anthropic' ? routeMismatch(loaded.route, target.baseURL) : undefined;
      if (elsewhere) log(`parent: ${elsewhere}`);
      if (plan.isolation === 'worktree') {
        const whole = plan.sparse
          ? (loaded.fields ?? []).filter((f) => f['file'] === undefined).length
          : loaded.directives.length;
        const line = await wholeWorktreesLine({
          workspace,
          repos: plan.repos,
          fields: loaded.fields,
          forks: whole,
          maxWorktrees: plan.limits.maxWorktrees,
        });
        if (line) log(line);
      }
      // the run directory and the plan stay out of `git status` of the repository they are in
      await excludeFromGit({ runsDir, planFile: planPath }, workspace);
      // a setup error must not leave the embedded emulator holding the process open
      const engine = await ForkEngine.create({
        provider,
        ...wire,
        baseURL: target.baseURL,
        apiKey: target.apiKey,
        workspace,
        runsDir,
        modelTable: catalogue,
        warm: plan.warm,
        layout: plan.layout,
        ...(plan.allow ? { allow: plan.allow } : {}),
        toolSet: plan.toolSet,
        ...(plan.denyTools ? { denyTools: plan.denyTools } : {}),
        ...(plan.limits.maxTurns ? { maxTurns: plan.limits.maxTurns } : {}),
        ...(plan.limits.maxTokens ? { maxTokens: plan.limits.maxTokens } : {}),
        ...(plan.limits.concurrency ? { concurrency: plan.limits.concurrency } : {}),
        pool: { maxThreads: plan.limits.maxThreads ?? 2 },
        ...(plan.limits.maxWorktrees ? { maxWorktrees: plan.limits.maxWorktrees } : {}),
        ...(plan.permissions
          ? {
              permissions: plan.permissions as PermissionPolicy,
              onPermission: terminalPermissionHandler({ allowAll: opts.allowAsks }),
            }
          : {}),
        sandbox: plan.sandbox,
        ...toolFlagsOf(plan),
        toolLimits,
        ...(plan.isolation === 'worktree' ? { isolation: 'worktree' as const } : {}),
        ...(plan.sparse ? { sparseWorktrees: true } : {}),
        ...(plan.repos ? { repos: plan.repos } : {}),
        ...(distributed ? { distributed } : {}),
        ...(maxUsd !== undefined ? { maxUsd } : {}),
      }).catch(async (err: unknown) => {
        await target.close();
        throw err;
      });
      let board: ProgressBoard | undefined;
      // while the board is up, its lines scroll above it: a plain write would be drawn over
      const interrupt = cancelOnInterrupt((line) => (board ? board.log(line) : log(line)), {
        stop: () => engine.destroy(),
      });
      try {
        // the manifest remembers the emulator script, so `forkcache resume` answers the same way
        const fan = engine.fanOut(snapshot, loaded.directives, {
          meta: { emulator: plan.emulator, ...(integration ? { [INTEGRATION_META]: integration } : {}) },
          ...(loaded.check ? { check: loaded.check } : {}),
          ...(loaded.fields ? { fields: loaded.fields } : {}),
          ...(loaded.requireChange ? { requireChange: true } : {}),
        });
        interrupt.watch(fan);
        // first, so a run that ends any way at all (0, a crash, a kill) has said where it is
        const runDir = resolve(runsDir, fan.id);
        log(`forkcache run: run directory ${runDir}`);
        board = new ProgressBoard({
          model: snapshot.model,
          plain: opts.json,
          catalogue,
          budget: () => engine.admission,
        });
        board.plan(fan);
        for await (const event of fan) {
          board.onEvent(event);
          continuity?.onEvent(event as Parameters<CacheContinuity['onEvent']>[0]);
        }
        board.stop();
        if (continuity) log(continuity.line());
        const result = await settledOrForks(fan, join(runsDir, fan.id), log);
        // the forks' work is judged merged: after Ctrl-C or at a spend cap, what is done stays on its branches
        const integrated =
          integration && !interrupt.interrupted
            ? await integrateAfterRun(join(runsDir, fan.id), integration, engine, catalogue, log)
            : undefined;
        const report = await reportAfterRun(result.summary.run_dir, opts.report, log, catalogue);
        const extra = {
          api: target.kind,
          ...(interrupt.interrupted ? { interrupted: true } : {}),
          ...(report.path ? { report: report.path } : {}),
          ...(continuity ? { parent_cache: continuity.json() } : {}),
        };
        if (opts.json) {
          const json = jsonSummary(result, extra);
          printOut(`${JSON.stringify(integrated ? withIntegration(json, integrated) : json)}\n`);
        } else
          printOut(
            `\n${formatFanOutResult(result, snapshot.model, catalogue, { forkRows: forkRowsInSummary(opts.json), ...(integrated ? { statusOf: integratedStatusOf(integrated) } : {}) })}\n${integrated ? `${integrationLines(integrated).join('\n')}\n` : ''}`,
          );
        const hint = interrupt.interrupted ? interruptedLine(result) : undefined;
        // the text summary above listed the forks not done: stderr counts them and says what to run
        for (const line of notDoneMessage(result, {
          listed: !opts.json,
          interrupted: hint !== undefined,
          statusOf: integrated ? integratedStatusOf(integrated) : undefined,
        }))
          log(line);
        for (const line of hostSandboxLines(result)) log(line);
        const lost = redisLostLine(result, opts.redis);
        if (lost) log(lost);
        const capped = result.summary.spend_cap?.stopped === true;
        if (capped) log(maxUsdMessage(join(runsDir, fan.id), result.summary.spend_cap!));
        const spendCap = result.summary.rate_limits.stopped !== null || capped;
        if (result.summary.rate_limits.stopped !== null)
          log(
            spendCapMessage(
              result.summary.run_dir,
              result.forks.filter((f) => f.error?.code === 'RATE_LIMIT_SPEND_CAP').length,
            ),
          );
        // an edit a fork could not apply is lost work: never a silent 0
        const clean =
          notDoneForks(result, integrated ? integratedStatusOf(integrated) : undefined).length === 0 &&
          editsNotApplied(result).length === 0 &&
          !report.failed &&
          result.summary.cost_error === null;
        if (result.summary.cost_error !== null) log(result.summary.cost_error);
        // a run with nothing left to do names its run directory last, for status, diff and merge
        if (clean && !interrupt.interrupted && !spendCap)
          log(`run directory: ${runDir} (forkcache status|diff|merge ${runDir})`);
        // the resume command is the last line after Ctrl-C, whatever the run's size
        if (hint) log(hint);
        process.exitCode = interrupt.interrupted
          ? INTERRUPTED_EXIT_CODE
          : spendCap
            ? SPEND_CAP_EXIT_CODE
            : integrated && !report.failed && result.summary.cost_error === null
              ? integrationExitCode(integrated)
              : clean
                ? 0
                : 1;
      } finally {
        interrupt.dispose();
        await closeAll(engine, target);
      }
    });
}

/**
 * The plan's OpenAI wire (`--openai-wire` over `openaiWire`) as engine options: the Responses
 * API is OpenAI's alone, and its TTL means nothing on another wire (bad input, exit 2, naming
 * the field or the flag that set it).
 */
function openAiWireOf(
  plan: Pick<Plan, 'openaiWire' | 'responsesTtl'>,
  provider: ProviderId,
  flag: OpenAiWire | undefined,
): Pick<ForkEngineOptions, 'openaiWire' | 'responsesTtl'> {
  const wire = flag ?? plan.openaiWire;
  const field = flag ? '--openai-wire' : 'openaiWire';
  if (wire === 'responses' && provider !== 'openai') {
    throw new ForkcacheError(
      'INVALID_FLAG',
      `${field}: responses is OpenAI's Responses API; provider ${provider} speaks ${provider === 'anthropic' ? 'the Messages API' : 'Chat Completions'}`,
      { data: { field } },
    );
  }
  if (wire !== 'responses') {
    if (plan.responsesTtl !== 'auto') {
      throw new ForkcacheError(
        'INVALID_FLAG',
        `responsesTtl: only with openaiWire responses (the forks speak ${provider === 'openai' ? 'Chat Completions' : provider})`,
        { data: { field: 'responsesTtl' } },
      );
    }
    return {};
  }
  return { openaiWire: 'responses', responsesTtl: plan.responsesTtl };
}
