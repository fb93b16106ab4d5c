import { dirname, resolve } from 'node:path';
import { z } from 'zod';
import { latencyNameSchema } from '../../integrations/emulator/latency.ts';
import { ForkcacheError } from '../../core/util/errors.ts';
import { assertForkRepos, assertRepoNames, REPO_FIELD, repoNameSchema } from '../../core/engine/fan-out/repos.ts';
import { captureSnapshot, type ParentSnapshot } from '../../core/fork/snapshot.ts';
import { readJsonFile } from '../../core/util/json-file.ts';
import type { SessionRoute } from '../importers/claude-route.ts';
import { EXECUTABLE_TOOL_NAMES, FILE_TOOL_NAMES } from '../../core/wire/tool-names.ts';
import { DEFAULT_CHECK_RETRIES, DEFAULT_CHECK_TIMEOUT_MS } from '../../core/engine/fork-checks.ts';
import {
  DEFAULT_INTEGRATION_ROUNDS,
  checkDependenciesSchema,
  integrationCheckSchema,
  type IntegrationSettings,
} from '../integration-settings.ts';
import type { FanOutCheck } from '../../core/engine/fan-out/types.ts';
import { permissionPolicySchema } from '../../core/tools/permissions.ts';
import { workspaceMbSchema } from '../../core/tools/limits.ts';
import { TOOL_FLAGS, toolFlagShape } from '../../core/tools/tool-flags.ts';
import { planSettingShape, withDeclaredNames } from './plan-settings.ts';
import { parseOrThrow } from '../../core/util/validation.ts';
import { importClaudeTranscript } from '../importers/claude-transcript.ts';
import { DEFAULT_PROVIDER, OPENAI_WIRES, providerIdSchema } from '../../core/wire/providers.ts';
import { PROVIDER_IDS } from '../../providers/registry.ts';
import { RESPONSES_CACHE_TTLS } from '../../core/wire/cache.ts';

const positive = z.number().int().positive();

/**
 * One directive: its text, or an object with the text and its fields (`file` for a plan made
 * from a glob; any other name too). A field is `{name}` in the plan's `check` (shell-quoted),
 * and `file` is named in summaries.
 */
const directiveEntry = z.union([
  z.string(),
  z
    .object({ directive: z.string() })
    .catchall(z.string())
    .superRefine((entry, ctx) => {
      for (const key of Object.keys(entry))
        if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key))
          ctx.addIssue({ code: 'custom', path: [key], message: 'a field name is letters, digits and _' });
    }),
]);

/**
 * A run plan (`forkcache run PLAN.json`). Relative paths are resolved against the plan's
 * directory. Every field's description is printed by `forkcache run --help` (plan-help.ts)
 * and documented in docs/plans.md.
 */
export const planSchema = z.strictObject({
  parent: z
    .union([z.string().min(1), z.record(z.string(), z.unknown())])
    .optional()
    .describe(
      "the parent's last request (model, system, tools, messages): a JSON file path or the object itself; `forkcache plan` writes one",
    ),
  parentTranscript: z
    .string()
    .min(1)
    .optional()
    .describe('a Claude Code (or Qwen Code) session transcript to rebuild the parent from, instead of `parent`'),
  directives: z
    .array(directiveEntry)
    .min(1, 'expected at least one directive')
    .describe('one fork each: a string, or { "directive": "...", "file": "...", <field>: "..." }'),
  model: z
    .string()
    .min(1)
    .optional()
    .describe("overrides the parent's model (all forks use one: it is in the cache key)"),
  modelTable: z
    .string()
    .min(1)
    .optional()
    .describe('a model catalogue JSON merged over the built-in one (prices a model forkcache does not know)'),
  workspace: z.string().min(1).default('.').describe('the directory the forks work in'),
  runsDir: z
    .string()
    .min(1)
    .optional()
    .describe(
      'the runs directory (default .forkcache/runs): each fan-out writes its run directory (manifest, transcripts, events, summary) in it',
    ),
  runDir: z.string().min(1).optional().describe('deprecated: the old name of runsDir'),
  provider: providerIdSchema
    .default(DEFAULT_PROVIDER)
    .describe(`the API the forks speak, ${PROVIDER_IDS.join(' | ')} (\`--provider\` overrides it)`),
  openaiWire: z
    .enum(OPENAI_WIRES)
    .default('chat')
    .describe(
      'provider openai only: chat (Chat Completions) or responses (the Responses API: a prewarm warm-up, breakpoints on the shared prefix, writes by TTL; `--openai-wire` overrides it)',
    ),
  responsesTtl: z
    .enum([...RESPONSES_CACHE_TTLS, 'auto'])
    .default('auto')
    .describe(
      'openaiWire responses only: how long the cache keeps the writes, 30m, 12h, or auto (12h when the fan-out is expected to outlive 30 minutes)',
    ),
  allow: z
    .array(z.enum(EXECUTABLE_TOOL_NAMES))
    .optional()
    .describe(`tools the forks may run (default: ${FILE_TOOL_NAMES.join(', ')}; bash only when listed)`),
  limits: z
    .strictObject({
      // the declared settings of the limits (`maxTurns` …: src/core/settings/engine-settings.ts)
      ...planSettingShape('limits'),
      maxThreads: positive.optional().describe('worker threads (default 2)'),
      bashTimeoutMs: positive.optional().describe('a bash command running longer is killed (milliseconds)'),
      bashMaxProcesses: positive.optional().describe('processes a bash command may run at once (bubblewrap)'),
      bashMaxMemoryMb: positive.optional().describe('memory of a bash command, in MB (bubblewrap)'),
      bashMaxFileMb: positive.optional().describe('largest file a bash command may write, in MB (bubblewrap)'),
      bashTmpMb: positive.optional().describe("size of a bash command's /tmp, in MB (bubblewrap)"),
      maxWorkspaceMb: workspaceMbSchema
        .optional()
        .describe("disk a fork's worktree may take beyond its checkout, in MB (isolation: worktree, as root)"),
    })
    .default({}),
  permissions: permissionPolicySchema
    .optional()
    .describe('which tool calls need asking (`ask`), are refused (`deny`) or run freely (`allow`, the default)'),
  // the engine's declared settings with a plan field (`warm`, `isolation`, `sparseWorktrees`,
  // `maxUsd` …: src/core/settings/engine-settings.ts), each with its schema, default and help
  ...planSettingShape(undefined),
  repos: z
    .array(repoNameSchema)
    .min(1)
    .optional()
    .describe(
      'a plan over several git repositories: their folders, relative to `workspace`; each directive names its own in a `repo` field (its `file` relative to that repository); needs isolation worktree',
    ),
  // every tool flag (`network` …) is a plan field of its name, off unless the plan says true
  ...toolFlagShape((name) => z.boolean().default(false).describe(TOOL_FLAGS[name])),
  check: z
    .string()
    .trim()
    .min(1)
    .optional()
    .describe(
      "a shell command run in each fork's workspace after it reports done; {file}, {directive} and the directive's fields are substituted, shell-quoted",
    ),
  checkLocal: z
    .boolean()
    .default(false)
    .describe(
      'the per-fork check is advisory (file-local): a fork whose check failed is still merged when the integrationCheck passes, and is not asked to fix it alone',
    ),
  integrationCheck: integrationCheckSchema
    .optional()
    .describe(
      'a shell command run on all the forks merged together, in an integration worktree (`go build ./...`, `tsc --noEmit`); in a plan over several repositories, one command or a map of repository to command',
    ),
  integrationRounds: z
    .number()
    .int()
    .min(0)
    .max(10)
    .default(DEFAULT_INTEGRATION_ROUNDS)
    .describe('fix-up turns the forks the integration check implicates get before they are left out'),
  checkDependencies: checkDependenciesSchema
    .optional()
    .describe(
      "folders at the repository's top the integration check sees read-only (default: node_modules, .venv, venv where git ignores them; [] for none)",
    ),
  requireChange: z
    .boolean()
    .default(false)
    .describe(
      'every fork must change a file: one that reports done having changed none ends no_change and counts as not done (forks with a `file` are judged either way; a run whose forks all changed nothing exits 1)',
    ),
  checkRetries: z
    .number()
    .int()
    .min(0)
    .max(20)
    .default(DEFAULT_CHECK_RETRIES)
    .describe("times a failing check's output goes back to the fork before it ends check_failed"),
  checkTimeoutMs: positive.default(DEFAULT_CHECK_TIMEOUT_MS).describe('a check running longer fails (milliseconds)'),
  emulator: z
    .strictObject({
      script: z
        .string()
        .min(1)
        .default('refactor')
        .describe('the scripted model (refactor acts on directives; echo only echoes them)'),
      latency: latencyNameSchema.default('fast').describe('simulated response times'),
    })
    .default({ script: 'refactor', latency: 'fast' })
    .describe('used only when the run goes to the embedded emulator'),
});

export type Plan = z.output<typeof planSchema>;

/** The plan's `limits` that are the tools' limits (the others are the fan-out's). */
export const BASH_LIMITS = [
  'bashTimeoutMs',
  'bashMaxProcesses',
  'bashMaxMemoryMb',
  'bashMaxFileMb',
  'bashTmpMb',
  'maxWorkspaceMb',
] as const;

/** The plan's limits that bound each bash command (the engine's `toolLimits`). */
export function planToolLimits(plan: Plan): Partial<Record<(typeof BASH_LIMITS)[number], number>> {
  return Object.fromEntries(BASH_LIMITS.flatMap((k) => (plan.limits[k] === undefined ? [] : [[k, plan.limits[k]]])));
}

export interface LoadedPlan {
  plan: Plan;
  /** The directives' texts, in order (a directive object's `directive`). */
  directives: string[];
  /** Each directive's fields, when some directive has any (`file` …). */
  fields: Record<string, string>[] | undefined;
  /** The plan's check, as the engine takes it. */
  check: FanOutCheck | undefined;
  /** Every fork must change a file (the plan's `requireChange`). */
  requireChange: boolean;
  /** The plan's integration step (`integrationCheck` …), as the manifest keeps it. */
  integration: IntegrationSettings | undefined;
  snapshot: ParentSnapshot;
  workspace: string;
  runsDir: string;
  /** The plan's `modelTable`, resolved against the plan's directory. */
  modelTable: string | undefined;
  /** What importing the parent used, dropped or substituted (a transcript import). */
  notes: string[];
  /** A transcript import: the tokens the session's cache should hold for this prefix. */
  expectedCachedTokens?: number | undefined;
  fromTranscript?: boolean;
  /** A Claude Code transcript import: where the session's requests went (its `api-request-route`). */
  route?: SessionRoute | undefined;
}

interface LoadPlanOptions {
  /** Rebuild the parent from this Claude Code session transcript instead of `plan.parent`. */
  claudeTranscript?: string | undefined;
  /** Overrides the plan's model (`--model`). */
  model?: string | undefined;
}

/** Read and validate a plan file and the parent it names. Every error names the field or file. */
export function loadPlan(path: string, options: LoadPlanOptions = {}): LoadedPlan {
  const base = dirname(resolve(path));
  const raw = parseOrThrow(planSchema, readJsonFile(path, 'plan', 'INVALID_PLAN'), 'INVALID_PLAN', `plan ${path}`);
  // a field under its older name (`sparse`) is read as its declared one (`sparseWorktrees`)
  const parsed = withDeclaredNames(raw, `plan ${path}`);
  const plan = options.model === undefined ? parsed : { ...parsed, model: options.model };
  if (plan.sparseWorktrees && plan.isolation !== 'worktree') {
    const field = raw.sparse ? 'sparse' : 'sparseWorktrees';
    throw new ForkcacheError('INVALID_PLAN', `plan ${path}: ${field}: needs "isolation": "worktree"`, {
      data: { field },
    });
  }
  checkPlanRepos(path, plan);
  checkIntegration(path, plan);
  // the old name beside the new one, pointing elsewhere: which one the user meant is unknown
  if (
    plan.runDir !== undefined &&
    plan.runsDir !== undefined &&
    resolve(base, plan.runDir) !== resolve(base, plan.runsDir)
  )
    throw new ForkcacheError(
      'INVALID_PLAN',
      `plan ${path}: runDir (the deprecated name of runsDir) and runsDir name different folders; keep runsDir`,
      { data: { field: 'runDir' } },
    );
  const paths = {
    workspace: resolve(base, plan.workspace),
    runsDir: resolve(base, plan.runsDir ?? plan.runDir ?? '.forkcache/runs'),
    modelTable: plan.modelTable === undefined ? undefined : resolve(base, plan.modelTable),
  };
  const transcript =
    options.claudeTranscript ??
    (plan.parentTranscript === undefined ? undefined : resolve(base, plan.parentTranscript));
  if (transcript !== undefined) {
    if (plan.parent !== undefined) {
      throw new ForkcacheError(
        'INVALID_PLAN',
        `plan ${path}: parent: remove it, or drop --parent-from-claude-transcript / parentTranscript (the parent comes from one of them)`,
        { data: { field: 'parent' } },
      );
    }
    const imported = importClaudeTranscript(transcript, { model: plan.model });
    // A Qwen Code session's forks run in the layout Qwen Code forks in.
    const layoutPlan = imported.source === 'qwen' ? { ...plan, layout: 'qwen' as const } : { ...plan };
    // a thinking budget imported with the parent needs the session's max_tokens, unless the plan sets one
    if (imported.maxTokens !== undefined && plan.limits.maxTokens === undefined)
      layoutPlan.limits = { ...plan.limits, maxTokens: imported.maxTokens };
    return {
      plan: layoutPlan,
      ...forkInputs(plan),
      snapshot: imported.snapshot,
      ...paths,
      notes: imported.notes,
      expectedCachedTokens: imported.expectedCachedTokens,
      fromTranscript: true,
      route: imported.route,
    };
  }
  if (plan.parent === undefined) {
    throw new ForkcacheError(
      'INVALID_PLAN',
      `plan ${path}: parent: required (a request JSON file or object), unless --parent-from-claude-transcript is given (or the plan names a parentTranscript)`,
      { data: { field: 'parent' } },
    );
  }
  const request =
    typeof plan.parent === 'string'
      ? readJsonFile(resolve(base, plan.parent), 'plan.parent', 'INVALID_PLAN')
      : plan.parent;
  const withModel = plan.model ? { ...(request as Record<string, unknown>), model: plan.model } : request;
  return { plan, ...forkInputs(plan), snapshot: captureSnapshot(withModel), ...paths, notes: [] };
}

/**
 * A plan over several repositories: distinct names, worktrees, and every directive naming one
 * of them in `repo`. A `repo` field in a plan without `repos` is refused too (it would be
 * ignored, and each fork would work in the one workspace). The folders themselves are checked
 * when the engine starts (`repos[1]: web is not a git work tree …`).
 */
function checkPlanRepos(path: string, plan: Plan): void {
  const entries = plan.directives.map((d) => (typeof d === 'string' ? undefined : d));
  try {
    if (plan.repos === undefined) {
      const i = entries.findIndex((e) => e?.[REPO_FIELD] !== undefined);
      if (i >= 0)
        throw new ForkcacheError(
          'INVALID_PLAN',
          `directives[${i}].${REPO_FIELD}: the plan has no repos (list the repositories in "repos", or rename the field)`,
          { data: { field: `directives[${i}].${REPO_FIELD}` } },
        );
      return;
    }
    assertRepoNames(plan.repos, plan.isolation);
    assertForkRepos(plan.repos, entries);
  } catch (err) {
    if (!(err instanceof ForkcacheError)) throw err;
    throw new ForkcacheError(err.code, `plan ${path}: ${err.message}`, { data: err.data });
  }
}

/** The integration step merges branches: it needs worktrees, and a map names the plan's repositories. */
function checkIntegration(path: string, plan: Plan): void {
  const check = plan.integrationCheck;
  if (check === undefined) return;
  if (plan.isolation !== 'worktree')
    throw new ForkcacheError(
      'INVALID_PLAN',
      `plan ${path}: integrationCheck: needs "isolation": "worktree" (it merges the forks' branches)`,
      { data: { field: 'integrationCheck' } },
    );
  if (typeof check === 'string') return;
  const unknown = Object.keys(check).filter((name) => !(plan.repos ?? []).includes(name));
  if (unknown.length > 0)
    throw new ForkcacheError(
      'INVALID_PLAN',
      `plan ${path}: integrationCheck: ${unknown.join(', ')} is not a repository of the plan (its repos: ${(plan.repos ?? []).join(', ') || 'none'})`,
      { data: { field: 'integrationCheck' } },
    );
}

/** The directives as the engine takes them: texts, fields and the check. */
function forkInputs(plan: Plan): Pick<LoadedPlan, 'directives' | 'fields' | 'check' | 'requireChange' | 'integration'> {
  const entries = plan.directives.map((d) => (typeof d === 'string' ? { directive: d } : d));
  const fields = entries.map(({ directive: _, ...rest }) => rest);
  return {
    directives: entries.map((e) => e.directive),
    fields: fields.some((f) => Object.keys(f).length > 0) ? fields : undefined,
    requireChange: plan.requireChange,
    check:
      plan.check === undefined
        ? undefined
        : // a local check is advisory: the fork is not asked to fix what only the whole repository can show
          { command: plan.check, retries: plan.checkLocal ? 0 : plan.checkRetries, timeoutMs: plan.checkTimeoutMs },
    integration:
      plan.integrationCheck === undefined
        ? undefined
        : {
            check: plan.integrationCheck,
            rounds: plan.integrationRounds,
            timeoutMs: plan.checkTimeoutMs,
            checkLocal: plan.checkLocal,
            ...(plan.checkDependencies ? { checkDependencies: plan.checkDependencies } : {}),
          },
  };
}
