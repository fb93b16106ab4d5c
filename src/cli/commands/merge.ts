import type { Command } from 'commander';
import { z } from 'zod';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ForkcacheError } from '../../core/util/errors.ts';
import { loadCatalogue } from '../../core/models/catalogue.ts';
import { locateFanOuts } from '../../core/run-dir/locate.ts';
import { parseFlags } from '../flags.ts';
import { flag, FLAGS } from '../flag-table.ts';
import { type MergePlan, mergeForks, REDONE, refuseDirty } from '../review/merge-forks.ts';
import { RETRY_PLAN_FILE, writeRetryPlan } from '../review/retry-plan.ts';
import { readManifest } from '../../core/run-dir/manifest.ts';
import { withRunLock } from '../review/run-lock.ts';
import { type ForkReview, pickForks, readRun, readRunRepos, repoOfRun } from '../review/run-forks.ts';
import { printErr, printOut } from '../terminal-safe.ts';
import { type IntegrationRecord, readIntegration } from '../../core/run-dir/integration.ts';
import { integrate } from '../integrate/integrate.ts';
import { integrationCounts, integrationJson, integrationLines } from '../integrate/report.ts';
import { integrationOf } from '../integration-settings.ts';
import { LEFT_OUT_EXIT_CODE, mergedExitCode, NOT_INTEGRATED_EXIT_CODE } from '../exit-codes.ts';

const optionsSchema = z.object({
  skip: z.string().min(1, 'expected fork ids, e.g. f03,f07').optional(),
  dryRun: FLAGS.dryRun.schema,
  cleanOnly: z.boolean().default(false),
  json: FLAGS.json.schema,
  repo: FLAGS.repo.schema,
  integrationCheck: FLAGS.integrationCheck.schema,
});

type MergeFlags = z.output<typeof optionsSchema>;

/**
 * The run's integration: a new one when `--integration-check` is given, or when the run has
 * an integration check and was never integrated (no fix-ups here); else the recorded one.
 */
async function integrationFor(dir: string, opts: MergeFlags): Promise<IntegrationRecord | undefined> {
  const recorded = readIntegration(dir);
  // an integration that could not be done (its check could not run, the base failed it) is tried again
  if (opts.integrationCheck === undefined && recorded !== undefined && !integrationCounts(recorded).blocked)
    return recorded;
  const settings = integrationOf(readManifest(dir), opts.integrationCheck);
  if (settings === undefined) return undefined;
  if (opts.dryRun && recorded === undefined && opts.integrationCheck === undefined) return undefined;
  return integrate(dir, { settings, catalogue: loadCatalogue(), log: (line) => void printErr(`${line}\n`) });
}

const integratedIds = (record: IntegrationRecord): Set<string> =>
  new Set(record.repos.flatMap((r) => r.forks.filter((f) => f.status === 'integrated').map((f) => f.fork_id)));

/** Forks whose work is in the target (merged now or before), done with nothing to merge, and left out. */
function mergeCounts(plans: readonly MergePlan[], forks: readonly ForkReview[], record: IntegrationRecord | undefined) {
  const merged = plans.reduce(
    // a blocked merge lists the forks that would merge, but moved nothing (no commit)
    (n, p) =>
      n + (p.commit === undefined ? 0 : p.merged.length) + p.skipped.filter((s) => s.why === 'merged already').length,
    0,
  );
  const unchanged = forks.filter(
    (f) => f.status === 'no_change' || (f.status === 'completed' && f.commit === null),
  ).length;
  // handed to the run of the retry plan, which the same merge of a runs directory counts
  const redone = plans.reduce((n, p) => n + p.skipped.filter((s) => s.why === REDONE).length, 0);
  return {
    forks: forks.length,
    merged,
    no_change: unchanged,
    redone,
    left_out: Math.max(0, forks.length - merged - unchanged - redone),
    check_passed: record ? record.repos.every((r) => r.passed) : null,
  };
}

/**
 * 0 when every fork's work is in the target (and the integration check passed), 4 when some
 * is, 5 when none is (exit-codes.ts). A dry run: 1 when something would not merge.
 */
function mergeExitCode(
  plans: readonly MergePlan[],
  forks: readonly ForkReview[],
  record: IntegrationRecord | undefined,
  dryRun: boolean,
): number {
  if (dryRun) return plans.some((p) => p.conflicts.length > 0 || p.refused.length > 0) ? 1 : 0;
  if (record !== undefined && integrationCounts(record).blocked) return NOT_INTEGRATED_EXIT_CODE;
  const counts = mergeCounts(plans, forks, record);
  return mergedExitCode({ merged: counts.merged, leftOut: counts.left_out, passed: counts.check_passed !== false });
}

const isMultiRepo = (dir: string): boolean => readManifest(dir).engine.repos !== undefined;

const forkJson = (plan: MergePlan) => ({
  target: plan.target,
  from: plan.from,
  commit: plan.commit ?? null,
  merged: plan.merged.map((f) => ({ fork_id: f.forkId, branch: f.branch, commit: f.commit })),
  conflicts: plan.conflicts.map(({ fork, files }) => ({ fork_id: fork.forkId, branch: fork.branch, files })),
  refused: plan.refused.map(({ fork, paths }) => ({ fork_id: fork.forkId, branch: fork.branch, paths })),
  skipped: plan.skipped.map(({ fork, why }) => ({ fork_id: fork.forkId, status: fork.status, why })),
});

/**
 * `merge` of a plan over several repositories: each repository's completed forks into the
 * branch checked out there, one commit per repository. Every repository is checked first (a
 * working tree with changes refuses the whole merge), and a conflict anywhere applies nothing
 * anywhere unless `--clean-only`, which merges the clean forks of every repository and writes
 * one retry plan for the conflicting forks of all of them.
 */
async function mergeRepos(dir: string, named: readonly string[], opts: MergeFlags): Promise<number> {
  const { views, plans, retryPlan, record } = await withRunLock(dir, async () => {
    const record = await integrationFor(dir, opts);
    const candidates = record ? integratedIds(record) : undefined;
    // a repository the integration left out (no command in the map): its forks merge as without one
    const decided = new Set(record?.repos.map((r) => r.repo));
    const views = await readRunRepos(dir, loadCatalogue(), { repo: opts.repo });
    const all = { ...views[0]!, forks: views.flatMap((v) => v.forks) };
    const skip = new Set(named.length > 0 ? pickForks(all, named).map((f) => f.forkId) : []);
    if (!opts.dryRun) for (const view of views) await refuseDirty(await repoOfRun(view));
    const tryAll = (dryRun: boolean) =>
      Promise.all(
        views.map((v) =>
          mergeForks(v, {
            skip,
            dryRun,
            cleanOnly: opts.cleanOnly,
            retryPlan: false,
            ...(candidates && decided.has(v.repo?.name ?? null) ? { candidates } : {}),
          }),
        ),
      );
    let plans = await tryAll(true);
    const blocked = plans.some((p) => p.conflicts.length > 0 || p.refused.length > 0);
    if (!opts.dryRun && (opts.cleanOnly || !blocked)) plans = await tryAll(false);
    const conflicting = plans.flatMap((p) => p.conflicts.map((c) => c.fork));
    const retryPlan =
      !opts.dryRun && opts.cleanOnly && conflicting.length > 0 ? writeRetryPlan(all, conflicting) : undefined;
    return { views, plans, retryPlan, record };
  });
  const forks = views.flatMap((v) => v.forks);
  const code = mergeExitCode(plans, forks, record, opts.dryRun);
  if (opts.json) {
    printOut(
      `${JSON.stringify({
        fanout: views[0]!.manifest.fanoutId,
        dry_run: opts.dryRun,
        repos: views.map((v, i) => ({ repo: v.repo!.name, repo_path: v.repo!.top, ...forkJson(plans[i]!) })),
        retry_plan: retryPlan ?? record?.retry_plan ?? null,
        counts: mergeCounts(plans, forks, record),
        ...(record ? { integration: integrationJson(record) } : {}),
      })}\n`,
    );
    return code;
  }
  const lines = views.flatMap((v, i) => [
    `repo ${v.repo!.name} (${v.repo!.top})`,
    ...textOf(plans[i]!, dir, opts).map((l) => `  ${l}`),
  ]);
  const conflicts = plans.reduce((n, p) => n + p.conflicts.length, 0);
  if (retryPlan)
    lines.push(
      `redo the ${conflicts} conflicting fork(s) of ${plans.filter((p) => p.conflicts.length > 0).length} repository(ies) on their current branches with: forkcache run ${retryPlan}`,
    );
  if (record) lines.push(...integrationLines(record));
  printOut(`${lines.join('\n')}\n`);
  return code;
}

function textOf(plan: MergePlan, dir: string, opts: z.output<typeof optionsSchema>): string[] {
  const clean = plan.merged.length;
  const lines = [
    ...plan.merged.map((f) => `merged   ${f.short}  ${f.branch}  ${f.commit!.slice(0, 10)}`),
    ...plan.conflicts.map(({ fork, files }) => `conflict ${fork.short}  ${fork.branch}  in ${files.join(', ')}`),
    ...plan.refused.map(({ fork, paths }) => `refused  ${fork.short}  ${fork.branch}  brings ${paths.join(', ')}`),
    ...plan.skipped.map(({ fork, why }) => `skipped  ${fork.short}  ${why}`),
  ];
  const blocked = plan.conflicts.length + plan.refused.length;
  const counts = [
    plan.conflicts.length > 0
      ? `${plan.conflicts.length} fork(s) conflict with ${plan.target} or the clean forks before them`
      : '',
    plan.refused.length > 0
      ? `${plan.refused.length} fork(s) bring a gitlink or a symlink leaving the repository (never merged: see each one's diff)`
      : '',
  ]
    .filter(Boolean)
    .join('; ');
  if (opts.dryRun)
    lines.push(
      `dry run: ${clean} fork(s) merge cleanly into ${plan.target}${blocked > 0 ? `; ${counts}` : ''}; nothing changed`,
    );
  else if (blocked > 0 && !opts.cleanOnly)
    lines.push(
      `nothing was merged: ${counts}. \`forkcache merge ${dir} --clean-only\` merges the ${clean} clean fork(s)${plan.conflicts.length > 0 ? ' and writes the conflicting ones as a plan that redoes them on the new HEAD' : ''}`,
    );
  else if (plan.commit)
    lines.push(
      `${plan.target}: ${plan.from.slice(0, 10)} → ${plan.commit.slice(0, 10)} (${clean} fork(s) in one commit)`,
    );
  else lines.push(`nothing to merge into ${plan.target}`);
  if (!opts.dryRun && opts.cleanOnly && blocked > 0) lines.push(`not merged: ${counts}`);
  if (plan.retryPlan)
    lines.push(
      `redo the ${plan.conflicts.length} conflicting fork(s) on ${plan.target} with: forkcache run ${plan.retryPlan}`,
    );
  return lines;
}

/** Register `forkcache merge RUN`. */
export function registerMergeCommand(program: Command): void {
  program
    .command('merge')
    .description(
      "merge every completed fork's branch into the workspace's current branch, in plan order, as one commit; every conflict is found in one pass, and at any of them nothing is applied unless --clean-only",
    )
    .argument(
      '<run-dir>',
      'a run directory of a worktree run, or a runs directory: each of its runs in turn, oldest first',
    )
    .option('--skip <forks>', 'leave these forks out (comma-separated: f03,f07)')
    .addOption(flag('dryRun'))
    .option(
      '--clean-only',
      'merge the forks that merge cleanly even when others conflict, and write the conflicting ones as a retry plan (forkcache run it)',
    )
    .addOption(flag('json'))
    .addOption(flag('repo'))
    .addOption(flag('integrationCheck'))
    .action(async (runDir: string, raw: Record<string, unknown>) => {
      const opts = parseFlags(optionsSchema, raw);
      const dirs = locateFanOuts(runDir, 'INVALID_RUN_DIR');
      const named = opts.skip ? opts.skip.split(',').map((s) => s.trim()) : [];
      if (dirs.length > 1 && named.length > 0)
        throw new ForkcacheError(
          'INVALID_FLAG',
          `--skip: ${runDir} holds ${dirs.length} runs; name the run directory the forks are in: ${dirs.join(', ')}`,
          { data: { field: '--skip' } },
        );
      // a runs directory: every run in it, oldest first (a retry plan's run after the run it redoes)
      const codes: number[] = [];
      for (const dir of dirs) {
        if (dirs.length > 1 && !opts.json) printOut(`# ${dir}\n`);
        const redone = dirs.length > 1 && existsSync(join(dir, RETRY_PLAN_FILE));
        codes.push(await mergeOne(dir, named, opts, redone));
      }
      process.exitCode = runsExitCode(codes);
    });
}

/**
 * The exit code of `merge` over several runs: each run's own when they agree; else some work
 * is in and some is not (4), or, in a dry run, 1 when any would not merge.
 */
function runsExitCode(codes: readonly number[]): number {
  if (codes.every((c) => c === codes[0])) return codes[0] ?? 0;
  if (codes.includes(1)) return 1;
  return LEFT_OUT_EXIT_CODE;
}

/** `merge` of one run directory (`redone`: see `MergeOptions.redone`); its exit code. */
async function mergeOne(dir: string, named: readonly string[], opts: MergeFlags, redone: boolean): Promise<number> {
  if (opts.repo !== undefined || isMultiRepo(dir)) return mergeRepos(dir, named, opts);
  const { run, plan, record } = await withRunLock(dir, async () => {
    const record = await integrationFor(dir, opts);
    const run = await readRun(dir, loadCatalogue());
    const skip = new Set(named.length > 0 ? pickForks(run, named).map((f) => f.forkId) : []);
    const candidates = record ? integratedIds(record) : undefined;
    const plan = await mergeForks(run, {
      skip,
      dryRun: opts.dryRun,
      cleanOnly: opts.cleanOnly,
      redone,
      ...(candidates ? { candidates } : {}),
    });
    return { run, plan, record };
  });
  const code = mergeExitCode([plan], run.forks, record, opts.dryRun);
  if (opts.json) {
    printOut(
      `${JSON.stringify({
        fanout: run.manifest.fanoutId,
        target: plan.target,
        from: plan.from,
        commit: plan.commit ?? null,
        dry_run: opts.dryRun,
        merged: plan.merged.map((f) => ({ fork_id: f.forkId, branch: f.branch, commit: f.commit })),
        conflicts: plan.conflicts.map(({ fork, files }) => ({ fork_id: fork.forkId, branch: fork.branch, files })),
        refused: plan.refused.map(({ fork, paths }) => ({ fork_id: fork.forkId, branch: fork.branch, paths })),
        skipped: plan.skipped.map(({ fork, why }) => ({ fork_id: fork.forkId, status: fork.status, why })),
        retry_plan: plan.retryPlan ?? record?.retry_plan ?? null,
        counts: mergeCounts([plan], run.forks, record),
        ...(record ? { integration: integrationJson(record) } : {}),
      })}\n`,
    );
    return code;
  }
  // file and link names are the forks' choice: printed inert
  printOut(`${[...textOf(plan, dir, opts), ...(record ? integrationLines(record) : [])].join('\n')}\n`);
  return code;
}
