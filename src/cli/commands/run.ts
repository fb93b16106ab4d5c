import { join } from 'node:path';
import { excludeFromGit } from '../../core/tools/git/exclude.ts';
import { wholeWorktreesLine } from '../output/worktree-line.ts';
import type { Command } from 'commander';
import { z } from 'zod';
import { ForkEngine } from '../../core/engine/engine.ts';
import { openEndpoint } from '../endpoint.ts';
import { OPENAI_WIRES, type OpenAiWire, type ProviderId } from '../../core/wire/providers.ts';
import { parseFlags } from '../flags.ts';
import { addFlags, type FlagDef, type FlagKey, flagSchema } from '../flag-table.ts';
import type { PermissionPolicy } from '../../core/tools/permissions.ts';
import { terminalPermissionHandler } from '../permission-prompt.ts';
import { loadPlan, type Plan, planSchema, planToolLimits } from '../plan/plan.ts';
import { planSettings } from '../plan/plan-settings.ts';
import { ForkcacheError } from '../../core/util/errors.ts';
import type { ForkEngineOptions } from '../../core/engine/options.ts';
import type { ModelCatalogue } from '../../core/models/catalogue.ts';
import { modelCheck } from '../models/model-check.ts';
import { describeSandbox, sandboxLine } from '../../core/tools/sandbox/report.ts';
import { planFieldsHelp } from '../plan/help.ts';
import { CacheContinuity } from '../importers/cache-continuity.ts';
import { routeMismatch } from '../importers/claude-route.ts';
import { dryRun } from '../dry-run/dry-run.ts';
import { distributedFor, HOSTS_SANDBOX_LINE } from '../distributed-run.ts';
import { toolFlagsOf } from '../../core/tools/tool-flags.ts';
import { requireFeatures } from '../optional-features.ts';
import { INTEGRATION_META, type IntegrationSettings, integrationOfPlan } from '../integration-settings.ts';
import { driveAll, type Interruptible, type OutputSink, type Pass, terminalSink } from './fan-out.ts';

type LoadedPlan = ReturnType<typeof loadPlan>;

/** The flags of `run`, in `--help`'s order; each shared one says which plan field it overrides. */
const RUN_FLAGS = [
  'api',
  'provider',
  'model',
  'json',
  'parentFromClaudeTranscript',
  'report',
  'redis',
  'redisTimeoutMs',
  'modelTable',
  'dryRun',
  'maxUsd',
  'assume',
  'integrationCheck',
  'allowAsks',
] as const satisfies readonly FlagKey[];

/** `--openai-wire`: `run`'s alone (a resumed run keeps the wire it was frozen with). */
export const OPENAI_WIRE_FLAG = {
  spec: '--openai-wire <wire>',
  description: `with provider openai: the API the forks speak, ${OPENAI_WIRES.join(' | ')} (overrides the plan's openaiWire)`,
  schema: z.enum(OPENAI_WIRES, { error: `expected ${OPENAI_WIRES.join(', ')}` }).optional(),
  planField: 'openaiWire',
} as const satisfies FlagDef;

const runOptionsSchema = flagSchema(RUN_FLAGS).extend({ openaiWire: OPENAI_WIRE_FLAG.schema });
type RunOptions = z.output<typeof runOptionsSchema>;

/** Register `forkcache run PLAN.json`. */
export function registerRunCommand(program: Command): void {
  const command = program
    .command('run')
    .description('fan out the directives of a plan file over its parent snapshot')
    .argument('<plan>', 'plan JSON file (its fields are listed below; `forkcache plan` writes one)')
    .addHelpText('after', () => `\nPlan fields (docs/plans.md):\n${planFieldsHelp(planSchema)}\n`);
  addFlags(command, RUN_FLAGS.slice(0, 2));
  command.option(OPENAI_WIRE_FLAG.spec, OPENAI_WIRE_FLAG.description);
  addFlags(command, RUN_FLAGS.slice(2), { api: 'auto' });
  command.action(async (planPath: string, raw: Record<string, unknown>) => {
    process.exitCode = await runAction(planPath, parseFlags(runOptionsSchema, raw), terminalSink);
  });
}

/**
 * `forkcache run PLAN`: the plan's fan-out (or its estimate, `--dry-run`), driven to its end
 * as `resume` drives each fan-out of a run directory (fan-out.ts). Resolves to the exit code.
 */
async function runAction(planPath: string, opts: RunOptions, sink: OutputSink): Promise<number> {
  // what --report and --redis need is checked before anything starts (exit 1 naming it)
  await requireFeatures(
    !opts.dryRun && opts.report !== undefined && opts.report !== false && 'report',
    !opts.dryRun && opts.redis !== undefined && 'distributed',
  );
  const loaded = loadPlan(planPath, { claudeTranscript: opts.parentFromClaudeTranscript, model: opts.model });
  const { plan, snapshot, modelTable } = loaded;
  const provider = opts.provider ?? plan.provider;
  const wire = openAiWireOf(plan, provider, opts.openaiWire);
  const log = (line: string): void => sink.err(line);
  for (const note of loaded.notes) log(`parent: ${note}`);
  const catalogue = modelCheck(snapshot.model, opts.modelTable ?? modelTable, log, Date.now(), provider);
  if (opts.redis && (plan.allow?.includes('bash') || loaded.check)) log(HOSTS_SANDBOX_LINE);
  else if (plan.allow?.includes('bash'))
    log(
      sandboxLine(
        describeSandbox(plan.sandbox, {
          network: plan.network,
          limits: planToolLimits(plan),
          isolation: plan.isolation,
        }),
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
    sink.out(opts.json ? `${JSON.stringify(report)}\n` : text);
    return 0;
  }
  return driveAll(
    async function* (ctl) {
      yield await passFromPlan(planPath, loaded, { opts, provider, wire, catalogue, maxUsd, integration }, ctl, log);
    },
    opts,
    sink,
  );
}

/** The plan's fan-out started: its endpoint, its engine, its forks under way. */
async function passFromPlan(
  planPath: string,
  loaded: LoadedPlan,
  how: {
    opts: RunOptions;
    provider: ProviderId;
    wire: Pick<ForkEngineOptions, 'openaiWire' | 'responsesTtl'>;
    catalogue: ModelCatalogue;
    maxUsd: number | undefined;
    integration: IntegrationSettings | undefined;
  },
  ctl: Interruptible,
  log: (line: string) => void,
): Promise<Pass> {
  const { plan, snapshot, workspace, runsDir } = loaded;
  const { opts, provider, catalogue, integration } = how;
  const continuity = loaded.fromTranscript ? new CacheContinuity(loaded.expectedCachedTokens) : undefined;
  const target = await openEndpoint(opts.api, plan.emulator, catalogue, provider);
  const distributed = await distributedFor(opts, target);
  log(`forkcache run: ${plan.directives.length} forks of ${snapshot.model} against ${target.label}`);
  // the session's cache is per endpoint: say when the forks go where it is not
  const elsewhere =
    loaded.route && target.kind === 'anthropic' ? routeMismatch(loaded.route, target.baseURL) : undefined;
  if (elsewhere) log(`parent: ${elsewhere}`);
  if (plan.isolation === 'worktree') {
    const line = await worktreesLine(loaded);
    if (line) log(line);
  }
  // the run directory and the plan stay out of `git status` of the repository they are in
  await excludeFromGit({ runsDir, planFile: planPath }, workspace);
  // a setup error must not leave the embedded emulator holding the process open
  const engine = await ForkEngine.create({
    ...engineOptionsOfPlan(loaded, opts.allowAsks),
    provider,
    ...how.wire,
    baseURL: target.baseURL,
    apiKey: target.apiKey,
    modelTable: catalogue,
    ...(distributed ? { distributed } : {}),
    ...(how.maxUsd !== undefined ? { maxUsd: how.maxUsd } : {}),
  }).catch(async (err: unknown) => {
    await target.close();
    throw err;
  });
  ctl.current = engine;
  // Ctrl-C cancels the forks from here on (before, it ends the process)
  void ctl.handle;
  // the manifest remembers the emulator script, so `forkcache resume` answers the same way
  const fan = engine.fanOut(snapshot, loaded.directives, {
    meta: { emulator: plan.emulator, ...(integration ? { [INTEGRATION_META]: integration } : {}) },
    ...(loaded.check ? { check: loaded.check } : {}),
    ...(loaded.fields ? { fields: loaded.fields } : {}),
    ...(loaded.requireChange ? { requireChange: true } : {}),
  });
  return {
    engine,
    target,
    fan,
    dir: join(runsDir, fan.id),
    model: snapshot.model,
    catalogue,
    integration,
    continuity,
    json: { api: target.kind },
    namesRunDir: true,
  };
}

/** The forks' worktrees against the disk they need: a line when they may not fit. */
async function worktreesLine(loaded: LoadedPlan): Promise<string | undefined> {
  const { plan } = loaded;
  const whole = plan.sparseWorktrees
    ? (loaded.fields ?? []).filter((f) => f['file'] === undefined).length
    : loaded.directives.length;
  return wholeWorktreesLine({
    workspace: loaded.workspace,
    repos: plan.repos,
    fields: loaded.fields,
    forks: whole,
    maxWorktrees: plan.limits.maxWorktrees,
  });
}

/**
 * The engine options a plan sets: its declared settings (limits, warm, layout, tool set,
 * sandbox, isolation, worktrees: `planSettings`), then the fields with a shape of their own
 * (tools, permissions, repositories).
 */
function engineOptionsOfPlan(loaded: LoadedPlan, allowAsks: boolean) {
  const { plan } = loaded;
  return {
    workspace: loaded.workspace,
    runsDir: loaded.runsDir,
    ...planSettings(plan),
    ...(plan.allow ? { allow: plan.allow } : {}),
    pool: { maxThreads: plan.limits.maxThreads ?? 2 },
    ...(plan.permissions
      ? {
          permissions: plan.permissions as PermissionPolicy,
          onPermission: terminalPermissionHandler({ allowAll: allowAsks }),
        }
      : {}),
    ...toolFlagsOf(plan),
    toolLimits: planToolLimits(plan),
    ...(plan.repos ? { repos: plan.repos } : {}),
  };
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
