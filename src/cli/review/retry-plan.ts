import { writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { readFanOutDir } from '../../core/run-dir/manifest.ts';
import { parseOrThrow } from '../../core/util/validation.ts';
import { BASH_LIMITS as PLAN_TOOL_LIMITS, planSchema } from '../plan/plan.ts';
import type { ForkReview, RunReview } from './run-forks.ts';
import { toolFlagsOf } from '../../core/tools/tool-flags.ts';
import type { Manifest } from '../../core/run-dir/manifest.ts';
import { integrationOf } from '../integration-settings.ts';

/** The plan fields of the run's integration step, if it had one. */
function integrationFields(manifest: Manifest, repos: readonly string[] | undefined): Record<string, unknown> {
  const settings = integrationOf(manifest);
  if (settings === undefined) return {};
  const check =
    typeof settings.check === 'string'
      ? settings.check
      : Object.fromEntries(Object.entries(settings.check).filter(([name]) => repos?.includes(name)));
  return {
    integrationCheck: check,
    integrationRounds: settings.rounds,
    ...(settings.checkLocal ? { checkLocal: true } : {}),
  };
}

/** Where `merge --clean-only` writes the plan that redoes the forks it could not merge. */
export const RETRY_PLAN_FILE = 'retry-plan.json';

const BASH_LIMITS: ReadonlySet<string> = new Set(PLAN_TOOL_LIMITS);

/**
 * A plan `forkcache run` takes that does `forks` again, each from its directive and fields, in
 * a new worktree run whose base is the repository's HEAD of that moment (the commit `merge`
 * just made): the same parent bytes (the run's snapshot), tools, limits, check, sandbox and
 * emulator script as the run, read from its manifest. Checked against the plan schema before
 * it is written, so what is written is what `run` accepts.
 */
export function writeRetryPlan(run: RunReview, forks: readonly ForkReview[]): string {
  const { manifest, snapshot } = readFanOutDir(run.dir);
  const { version: _v, source: _s, ...parent } = snapshot;
  const engine = manifest.engine;
  const directives = forks.map((fork) => {
    const fields = manifest.fields?.[fork.index];
    return fields ? { directive: fork.directive, ...fields } : fork.directive;
  });
  const limits: Record<string, number> = {
    maxTurns: engine.maxTurns,
    maxTokens: engine.maxTokens,
    ...(engine.concurrency ? { concurrency: engine.concurrency } : {}),
    ...Object.fromEntries(Object.entries(engine.toolLimits).filter(([k]) => BASH_LIMITS.has(k))),
  };
  const emulator = manifest.meta['emulator'];
  const plan = {
    parent,
    directives,
    workspace: engine.workspace,
    // absolute: a plan's relative runsDir is read from the plan file's folder (this run
    // directory), and the retry's run nested inside it where merge and clean never looked
    runsDir: resolve(dirname(run.dir)),
    warm: engine.warm,
    layout: manifest.prefix.layout,
    provider: manifest.prefix.provider,
    allow: engine.allow,
    limits,
    ...(Object.keys(engine.permissions).length > 0 ? { permissions: engine.permissions } : {}),
    isolation: 'worktree',
    // a plan over several repositories: those of the forks it redoes, in the run's order
    ...(engine.repos ? { repos: engine.repos.filter((name) => forks.some((f) => f.repo === name)) } : {}),
    ...(engine.sparseWorktrees ? { sparseWorktrees: true } : {}),
    sandbox: engine.sandbox,
    ...toolFlagsOf(engine),
    ...(manifest.check
      ? {
          check: manifest.check.command,
          checkRetries: manifest.check.retries,
          checkTimeoutMs: manifest.check.timeoutMs,
        }
      : {}),
    // the redone forks are integrated as the run's were
    ...integrationFields(
      manifest,
      engine.repos?.filter((name) => forks.some((f) => f.repo === name)),
    ),
    ...(engine.maxUsd === undefined ? {} : { maxUsd: engine.maxUsd }),
    ...(emulator && typeof emulator === 'object' ? { emulator } : {}),
  };
  const path = join(run.dir, RETRY_PLAN_FILE);
  parseOrThrow(planSchema, plan, 'INVALID_PLAN', `retry plan ${path}`);
  writeFileSync(path, `${JSON.stringify(plan, null, 2)}\n`);
  return path;
}
