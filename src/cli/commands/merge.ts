import type { Command } from 'commander';
import { z } from 'zod';
import { ForkcacheError } from '../../errors.ts';
import { loadCatalogue } from '../../models/catalogue.ts';
import { locateFanOuts } from '../../run-dir/locate.ts';
import { parseFlags } from '../flags.ts';
import { type MergePlan, mergeForks } from '../review/merge-forks.ts';
import { withRunLock } from '../review/run-lock.ts';
import { pickForks, readRun } from '../review/run-forks.ts';
import { printOut } from '../terminal-safe.ts';

const optionsSchema = z.object({
  skip: z.string().min(1, 'expected fork ids, e.g. f03,f07').optional(),
  dryRun: z.boolean().default(false),
  cleanOnly: z.boolean().default(false),
  json: z.boolean().default(false),
});

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
    .argument('<run-dir>', 'a run directory of a worktree run (or a runs directory holding just one)')
    .option('--skip <forks>', 'leave these forks out (comma-separated: f03,f07)')
    .option('--dry-run', 'check what merges and list every conflict, changing nothing')
    .option(
      '--clean-only',
      'merge the forks that merge cleanly even when others conflict, and write the conflicting ones as a retry plan (forkcache run it)',
    )
    .option('--json', 'print one JSON object')
    .action(async (runDir: string, raw: Record<string, unknown>) => {
      const opts = parseFlags(optionsSchema, raw);
      const dirs = locateFanOuts(runDir, 'INVALID_ARGUMENT');
      if (dirs.length > 1)
        throw new ForkcacheError(
          'INVALID_ARGUMENT',
          `merge: ${runDir} holds ${dirs.length} fan-outs; name one: ${dirs.join(', ')}`,
          { data: { field: 'run-dir' } },
        );
      const dir = dirs[0]!;
      const { run, plan } = await withRunLock(dir, async () => {
        const run = await readRun(dir, loadCatalogue());
        const named = opts.skip ? opts.skip.split(',').map((s) => s.trim()) : [];
        const skip = new Set(named.length > 0 ? pickForks(run, named).map((f) => f.forkId) : []);
        return { run, plan: await mergeForks(run, { skip, dryRun: opts.dryRun, cleanOnly: opts.cleanOnly }) };
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
    });
}
