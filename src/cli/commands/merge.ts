import type { Command } from 'commander';
import { z } from 'zod';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ForkcacheError } from '../../errors.ts';
import { loadCatalogue } from '../../models/catalogue.ts';
import { locateFanOuts } from '../../run-dir/locate.ts';
import { parseFlags } from '../flags.ts';
import { type MergePlan, mergeForks, refuseDirty } from '../review/merge-forks.ts';
import { RETRY_PLAN_FILE, writeRetryPlan } from '../review/retry-plan.ts';
import { readManifest } from '../../run-dir/manifest.ts';
import { withRunLock } from '../review/run-lock.ts';
import { pickForks, readRun, readRunRepos, repoOfRun } from '../review/run-forks.ts';
import { printOut } from '../terminal-safe.ts';

const optionsSchema = z.object({
  skip: z.string().min(1, 'expected fork ids, e.g. f03,f07').optional(),
  dryRun: z.boolean().default(false),
  cleanOnly: z.boolean().default(false),
  json: z.boolean().default(false),
  repo: z.string().min(1).optional(),
});

type MergeFlags = z.output<typeof optionsSchema>;

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
async function mergeRepos(dir: string, named: readonly string[], opts: MergeFlags): Promise<void> {
  const { views, plans, retryPlan } = await withRunLock(dir, async () => {
    const views = await readRunRepos(dir, loadCatalogue(), { repo: opts.repo });
    const all = { ...views[0]!, forks: views.flatMap((v) => v.forks) };
    const skip = new Set(named.length > 0 ? pickForks(all, named).map((f) => f.forkId) : []);
    if (!opts.dryRun) for (const view of views) await refuseDirty(await repoOfRun(view));
    const tryAll = (dryRun: boolean) =>
      Promise.all(views.map((v) => mergeForks(v, { skip, dryRun, cleanOnly: opts.cleanOnly, retryPlan: false })));
    let plans = await tryAll(true);
    const blocked = plans.some((p) => p.conflicts.length > 0 || p.refused.length > 0);
    if (!opts.dryRun && (opts.cleanOnly || !blocked)) plans = await tryAll(false);
    const conflicting = plans.flatMap((p) => p.conflicts.map((c) => c.fork));
    const retryPlan =
      !opts.dryRun && opts.cleanOnly && conflicting.length > 0 ? writeRetryPlan(all, conflicting) : undefined;
    return { views, plans, retryPlan };
  });
  if (plans.some((p) => p.conflicts.length > 0 || p.refused.length > 0)) process.exitCode = 1;
  if (opts.json) {
    printOut(
      `${JSON.stringify({
        fanout: views[0]!.manifest.fanoutId,
        dry_run: opts.dryRun,
        repos: views.map((v, i) => ({ repo: v.repo!.name, repo_path: v.repo!.top, ...forkJson(plans[i]!) })),
        retry_plan: retryPlan ?? null,
      })}\n`,
    );
    return;
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
  printOut(`${lines.join('\n')}\n`);
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
    .option('--dry-run', 'check what merges and list every conflict, changing nothing')
    .option(
      '--clean-only',
      'merge the forks that merge cleanly even when others conflict, and write the conflicting ones as a retry plan (forkcache run it)',
    )
    .option('--json', 'print one JSON object')
    .option('--repo <name>', 'a plan over several repositories: only this one')
    .action(async (runDir: string, raw: Record<string, unknown>) => {
      const opts = parseFlags(optionsSchema, raw);
      const dirs = locateFanOuts(runDir, 'INVALID_ARGUMENT');
      const named = opts.skip ? opts.skip.split(',').map((s) => s.trim()) : [];
      if (dirs.length > 1 && named.length > 0)
        throw new ForkcacheError(
          'INVALID_ARGUMENT',
          `--skip: ${runDir} holds ${dirs.length} runs; name the run directory the forks are in: ${dirs.join(', ')}`,
          { data: { field: '--skip' } },
        );
      // a runs directory: every run in it, oldest first (a retry plan's run after the run it redoes)
      for (const dir of dirs) {
        if (dirs.length > 1 && !opts.json) printOut(`# ${dir}\n`);
        const redone = dirs.length > 1 && existsSync(join(dir, RETRY_PLAN_FILE));
        await mergeOne(dir, named, opts, redone);
      }
    });
}

/** `merge` of one run directory (`redone`: see `MergeOptions.redone`). */
async function mergeOne(dir: string, named: readonly string[], opts: MergeFlags, redone: boolean): Promise<void> {
  if (opts.repo !== undefined || isMultiRepo(dir)) {
    await mergeRepos(dir, named, opts);
    return;
  }
  const { run, plan } = await withRunLock(dir, async () => {
    const run = await readRun(dir, loadCatalogue());
    const skip = new Set(named.length > 0 ? pickForks(run, named).map((f) => f.forkId) : []);
    return {
      run,
      plan: await mergeForks(run, { skip, dryRun: opts.dryRun, cleanOnly: opts.cleanOnly, redone }),
    };
  });
  // a fork left out by a conflict or a refusal is work not done
  if (plan.conflicts.length > 0 || plan.refused.length > 0) process.exitCode = 1;
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
        retry_plan: plan.retryPlan ?? null,
      })}\n`,
    );
    return;
  }
  // file and link names are the forks' choice: printed inert
  printOut(`${textOf(plan, dir, opts).join('\n')}\n`);
}
