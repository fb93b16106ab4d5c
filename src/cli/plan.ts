import { dirname, resolve } from 'node:path';
import { z } from 'zod';
import { latencyNameSchema } from '../emulator/latency.ts';
import { WARM_STRATEGIES, type WarmStrategy } from '../engine/warm-gate.ts';
import { ForkcacheError } from '../errors.ts';
import { FORK_LAYOUTS, type ForkLayout } from '../fork/layouts.ts';
import { captureSnapshot, type ParentSnapshot } from '../fork/snapshot.ts';
import { readJsonFile } from '../json-file.ts';
import { EXECUTABLE_TOOL_NAMES } from '../wire/tool-names.ts';
import { permissionPolicySchema } from '../tools/permissions.ts';
import { parseOrThrow } from '../validation.ts';
import { importClaudeTranscript } from './claude-transcript.ts';
import { providerIdSchema } from '../wire/providers.ts';

const positive = z.number().int().positive();

/**
 * A run plan (`forkcache run PLAN.json`). Relative paths are resolved against the plan's
 * directory.
 */
export const planSchema = z.strictObject({
  /**
   * The parent's last request: a JSON file path, or the request object itself. Optional only
   * when the parent comes from elsewhere (`--parent-from-claude-transcript`).
   */
  parent: z.union([z.string().min(1), z.record(z.string(), z.unknown())]).optional(),
  /** A Claude Code (or Qwen Code) session transcript to rebuild the parent from, instead of `parent`. */
  parentTranscript: z.string().min(1).optional(),
  directives: z.array(z.string()).min(1, 'expected at least one directive'),
  /** Overrides the parent's model (the cache key includes the model: all forks use one). */
  model: z.string().min(1).optional(),
  /** A model catalogue file merged over the built-in one (prices a model forkcache does not know). */
  modelTable: z.string().min(1).optional(),
  workspace: z.string().min(1).default('.'),
  runDir: z.string().min(1).default('.forkcache/runs'),
  warm: z.enum(WARM_STRATEGIES as [WarmStrategy, ...WarmStrategy[]]).default('first-child'),
  layout: z.enum(FORK_LAYOUTS as [ForkLayout, ...ForkLayout[]]).default('claude'),
  /** The API the forks speak (`--provider` overrides it): the same plan runs on any of them. */
  provider: providerIdSchema.default('anthropic'),
  allow: z.array(z.enum(EXECUTABLE_TOOL_NAMES)).optional(),
  limits: z
    .strictObject({
      maxTurns: positive.optional(),
      maxTokens: positive.optional(),
      concurrency: positive.optional(),
      maxThreads: positive.optional(),
    })
    .default({}),
  /** Which tool calls need asking (`ask`), are refused (`deny`) or run freely (`allow`, the default). */
  permissions: permissionPolicySchema.optional(),
  /** `worktree`: each fork in its own git worktree and branch (the workspace must be a git repository). */
  isolation: z.enum(['none', 'worktree']).default('none'),
  /** Where `bash` runs: `auto` (bubblewrap when it works here), `bwrap` (required), `none`. */
  sandbox: z.enum(['auto', 'bwrap', 'none']).default('auto'),
  /** Used only when the run goes to the embedded emulator. */
  emulator: z
    .strictObject({ script: z.string().min(1).default('echo'), latency: latencyNameSchema.default('fast') })
    .default({ script: 'echo', latency: 'fast' }),
});

export type Plan = z.output<typeof planSchema>;

export interface LoadedPlan {
  plan: Plan;
  snapshot: ParentSnapshot;
  workspace: string;
  runDir: string;
  /** The plan's `modelTable`, resolved against the plan's directory. */
  modelTable: string | undefined;
  /** What importing the parent used, dropped or substituted (a transcript import). */
  notes: string[];
  /** A transcript import: the tokens the session's cache should hold for this prefix. */
  expectedCachedTokens?: number | undefined;
  fromTranscript?: boolean;
}

export interface LoadPlanOptions {
  /** Rebuild the parent from this Claude Code session transcript instead of `plan.parent`. */
  claudeTranscript?: string | undefined;
  /** Overrides the plan's model (`--model`). */
  model?: string | undefined;
}

/** Read and validate a plan file and the parent it names. Every error names the field or file. */
export function loadPlan(path: string, options: LoadPlanOptions = {}): LoadedPlan {
  const base = dirname(resolve(path));
  const parsed = parseOrThrow(planSchema, readJsonFile(path, 'plan'), 'INVALID_ARGUMENT', `plan ${path}`);
  const plan = options.model === undefined ? parsed : { ...parsed, model: options.model };
  const paths = {
    workspace: resolve(base, plan.workspace),
    runDir: resolve(base, plan.runDir),
    modelTable: plan.modelTable === undefined ? undefined : resolve(base, plan.modelTable),
  };
  const transcript =
    options.claudeTranscript ??
    (plan.parentTranscript === undefined ? undefined : resolve(base, plan.parentTranscript));
  if (transcript !== undefined) {
    if (plan.parent !== undefined) {
      throw new ForkcacheError(
        'INVALID_ARGUMENT',
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
      snapshot: imported.snapshot,
      ...paths,
      notes: imported.notes,
      expectedCachedTokens: imported.expectedCachedTokens,
      fromTranscript: true,
    };
  }
  if (plan.parent === undefined) {
    throw new ForkcacheError(
      'INVALID_ARGUMENT',
      `plan ${path}: parent: required (a request JSON file or object), unless --parent-from-claude-transcript is given (or the plan names a parentTranscript)`,
      { data: { field: 'parent' } },
    );
  }
  const request =
    typeof plan.parent === 'string' ? readJsonFile(resolve(base, plan.parent), 'plan.parent') : plan.parent;
  const withModel = plan.model ? { ...(request as Record<string, unknown>), model: plan.model } : request;
  return { plan, snapshot: captureSnapshot(withModel), ...paths, notes: [] };
}
