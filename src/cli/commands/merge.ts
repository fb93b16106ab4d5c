import type { Command } from 'commander';
import { z } from 'zod';
import { ForkcacheError } from '../../errors.ts';
import { loadCatalogue } from '../../models/catalogue.ts';
import { locateFanOuts } from '../../run-dir/locate.ts';
import { parseFlags } from '../flags.ts';
import { mergeForks } from '../review/merge-forks.ts';
import { pickForks, readRun } from '../review/run-forks.ts';
import { printOut } from '../terminal-safe.ts';

const optionsSchema = z.object({
  skip: z.string().min(1, 'expected fork ids, e.g. f03,f07').optional(),
  dryRun: z.boolean().default(false),
  json: z.boolean().default(false),
});

/** Register `forkcache merge RUN`. */
export function registerMergeCommand(program: Command): void {
  program
    .command('merge')
    .description(
      "merge every completed fork's branch into the workspace's current branch, in plan order, as one commit; at a conflict nothing is applied",
    )
    .argument('<run-dir>', 'a fan-out directory of a worktree run (or a runs directory holding just one)')
    .option('--skip <forks>', 'leave these forks out (comma-separated: f03,f07)')
    .option('--dry-run', 'check that everything merges and say what would be merged, changing nothing')
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
      const run = await readRun(dirs[0]!, loadCatalogue());
      const named = opts.skip ? opts.skip.split(',').map((s) => s.trim()) : [];
      const skip = new Set(named.length > 0 ? pickForks(run, named).map((f) => f.forkId) : []);
      const plan = await mergeForks(run, skip, opts.dryRun);
      if (opts.json) {
        printOut(
          `${JSON.stringify({
            fanout: run.manifest.fanoutId,
            target: plan.target,
            from: plan.from,
            commit: plan.commit ?? null,
            dry_run: opts.dryRun,
            merged: plan.merged.map((f) => ({ fork_id: f.forkId, branch: f.branch, commit: f.commit })),
            skipped: plan.skipped.map(({ fork, why }) => ({ fork_id: fork.forkId, status: fork.status, why })),
          })}\n`,
        );
        return;
      }
      const lines = [
        ...plan.merged.map((f) => `merged   ${f.short}  ${f.branch}  ${f.commit!.slice(0, 10)}`),
        ...plan.skipped.map(({ fork, why }) => `skipped  ${fork.short}  ${why}`),
        plan.merged.length === 0
          ? `nothing to merge into ${plan.target}`
          : opts.dryRun
            ? `dry run: ${plan.merged.length} fork(s) merge cleanly into ${plan.target}; nothing changed`
            : `${plan.target}: ${plan.from.slice(0, 10)} → ${plan.commit!.slice(0, 10)} (${plan.merged.length} fork(s) in one commit)`,
      ];
      printOut(`${lines.join('\n')}\n`);
    });
}
