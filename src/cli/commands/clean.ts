import type { Command } from 'commander';
import { z } from 'zod';
import { loadCatalogue } from '../../models/catalogue.ts';
import { locateFanOuts } from '../../run-dir/locate.ts';
import { parseFlags } from '../flags.ts';
import { cleanRun } from '../review/clean-run.ts';
import { readRun } from '../review/run-forks.ts';
import { printOut } from '../terminal-safe.ts';

const optionsSchema = z.object({ dryRun: z.boolean().default(false), json: z.boolean().default(false) });

/** Register `forkcache clean RUN`. */
export function registerCleanCommand(program: Command): void {
  program
    .command('clean')
    .description("remove a run's worktrees and its forkcache/<fork> branches (never a branch the run did not make)")
    .argument('<run-dir>', 'a fan-out directory, or a runs directory holding several')
    .option('--dry-run', 'list what would be removed, removing nothing')
    .option('--json', 'print one JSON object per fan-out')
    .action(async (runDir: string, raw: Record<string, unknown>) => {
      const opts = parseFlags(optionsSchema, raw);
      for (const dir of locateFanOuts(runDir, 'INVALID_ARGUMENT')) {
        const run = await readRun(dir, loadCatalogue());
        const result = await cleanRun(run, opts.dryRun);
        if (opts.json) {
          printOut(`${JSON.stringify({ fanout: run.manifest.fanoutId, dry_run: opts.dryRun, ...result })}\n`);
          continue;
        }
        const verb = opts.dryRun ? 'would remove' : 'removed';
        const lines = [
          ...result.removed.map((s) =>
            s.kind === 'worktree'
              ? `${verb} worktree ${s.name}`
              : `${verb} branch ${s.name} (${s.commit!.slice(0, 10)}${s.merged ? ', merged' : ', NOT merged: `git branch ' + s.name + ' ' + s.commit + '` brings it back'})`,
          ),
          ...result.kept.map((k) => `kept ${k.name}: ${k.why}`),
          `${run.manifest.fanoutId}: ${result.removed.length === 0 ? 'nothing to remove' : `${result.removed.length} ${opts.dryRun ? 'to remove' : 'removed'}`}`,
        ];
        printOut(`${lines.join('\n')}\n`);
      }
    });
}
