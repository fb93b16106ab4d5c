import { z } from 'zod';
import { DEFAULT_CHECK_TIMEOUT_MS } from '../core/engine/fork-checks.ts';
import { ForkcacheError } from '../core/util/errors.ts';
import type { Manifest } from '../core/run-dir/manifest.ts';
import { parseOrThrow } from '../core/util/validation.ts';

/** Fix-up rounds an integration gives the forks its check implicates, unless the plan says. */
export const DEFAULT_INTEGRATION_ROUNDS = 2;

/** One command for every repository, or one per repository of a plan over several. */
export const integrationCheckSchema = z.union([
  z.string().trim().min(1, 'expected a shell command'),
  z.record(z.string(), z.string().trim().min(1, 'expected a shell command')),
]);

/**
 * The folders of the repository's checkout an integration check sees (read-only) when the plan
 * names none: what a TypeScript or Python project installs its tools into, not tracked by git.
 */
export const DEFAULT_CHECK_DEPENDENCIES: readonly string[] = ['node_modules', '.venv', 'venv'];

/** A dependency folder: one entry at the repository's top, by name. */
const dependencyNameSchema = z
  .string()
  .refine(
    (name) =>
      /^[^/\\\0]+$/.test(name) && name !== '.' && name !== '..' && name !== '.git' && !name.startsWith('.forkcache'),
    "expected a folder's name at the repository's top (no `/`, not `.git`)",
  );

/** `checkDependencies`: the folders named, or (absent) the default ones git ignores. */
export const checkDependenciesSchema = z.array(dependencyNameSchema);

/**
 * What the integration step runs, as the run's manifest keeps it (`meta.integration`), so
 * `resume` and `merge` integrate the same way the run did.
 */
export const integrationSettingsSchema = z.strictObject({
  check: integrationCheckSchema,
  rounds: z.number().int().min(0).max(10).default(DEFAULT_INTEGRATION_ROUNDS),
  timeoutMs: z.number().int().positive().default(DEFAULT_CHECK_TIMEOUT_MS),
  /** The per-fork check is advisory: a fork whose check failed is still integrated when the integration check passes. */
  checkLocal: z.boolean().default(false),
  /** The checkout's dependency folders the check sees read-only; absent: `DEFAULT_CHECK_DEPENDENCIES` that git ignores. */
  checkDependencies: checkDependenciesSchema.optional(),
});

export type IntegrationSettings = z.output<typeof integrationSettingsSchema>;

/** The key of the manifest's `meta` the settings live under. */
export const INTEGRATION_META = 'integration';

/** The run's integration settings (`--integration-check` wins over the recorded command); undefined when it has none. */
export function integrationOf(manifest: Manifest, command?: string): IntegrationSettings | undefined {
  const recorded = manifest.meta[INTEGRATION_META];
  if (recorded === undefined && command === undefined) return undefined;
  const base = recorded === undefined ? {} : (recorded as Record<string, unknown>);
  return parseOrThrow(
    integrationSettingsSchema,
    command === undefined ? base : { ...base, check: command },
    command === undefined ? 'INVALID_RUN_DIR' : 'INVALID_FLAG',
    command === undefined ? `${manifest.fanoutId}: meta.integration` : '--integration-check',
  );
}

/**
 * The command for one repository: the plan's string, or its entry for `repo` in a plan over
 * several. Undefined when a per-repository map has no entry (that repository is not integrated).
 */
export function commandFor(settings: IntegrationSettings, repo: string | undefined): string | undefined {
  if (typeof settings.check === 'string') return settings.check;
  if (repo === undefined)
    throw new ForkcacheError(
      'INVALID_PLAN',
      'integrationCheck: a map of repositories is for a plan over several (`repos`); give one command',
      { data: { field: 'integrationCheck' } },
    );
  return settings.check[repo];
}

/**
 * The integration step of a plan (`integrationCheck` …), `--integration-check` winning over
 * the plan's command; undefined when it has none.
 */
export function integrationOfPlan(
  // the plan's fields by shape: plan.ts imports this file's schema
  loaded: {
    plan: {
      isolation?: string;
      integrationRounds: number;
      checkTimeoutMs: number;
      checkLocal: boolean;
      checkDependencies?: string[] | undefined;
    };
    integration: IntegrationSettings | undefined;
  },
  flag: string | undefined,
): IntegrationSettings | undefined {
  if (flag === undefined) return loaded.integration;
  if (loaded.plan.isolation !== 'worktree')
    throw new ForkcacheError(
      'INVALID_FLAG',
      '--integration-check: needs a plan with "isolation": "worktree" (it merges the forks\' branches)',
      { data: { field: '--integration-check' } },
    );
  return {
    check: flag,
    rounds: loaded.plan.integrationRounds,
    timeoutMs: loaded.plan.checkTimeoutMs,
    checkLocal: loaded.plan.checkLocal,
    ...(loaded.plan.checkDependencies ? { checkDependencies: loaded.plan.checkDependencies } : {}),
  };
}
