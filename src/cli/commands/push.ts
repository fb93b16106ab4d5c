import type { Command } from 'commander';
import { z } from 'zod';
import { loadCatalogue } from '../../models/catalogue.ts';
import { locateFanOuts } from '../../run-dir/locate.ts';
import { parseFlags } from '../flags.ts';
import { printOut } from '../terminal-safe.ts';
import { pushRun } from '../review/push-run.ts';
import { readRun } from '../review/run-forks.ts';
import { withRunLock } from '../review/run-lock.ts';

const optionsSchema = z.object({
  remote: z.string().min(1, 'expected a remote name, e.g. origin'),
  branch: z.string().min(1).optional(),
  json: z.boolean().default(false),
});

/** Register `forkcache push RUN --remote NAME`. */
export function registerPushCommand(program: Command): void {
  program
    .command('push')
    .description(
      "push one branch per fan-out (forkcache/<fanout>): the run's base with every completed fork that merges cleanly, its commit message listing them",
    )
    .argument('<run-dir>', 'a run directory of a worktree run, or a runs directory holding several')
    .requiredOption('--remote <name>', 'the git remote to push to (a name `git remote` lists)')
    .option('--branch <name>', 'the remote branch (default forkcache/<fanout>; one fan-out only)')
    .option('--json', 'print one JSON object per fan-out')
    .action(async (runDir: string, raw: Record<string, unknown>) => {
      const opts = parseFlags(optionsSchema, raw);
      for (const dir of locateFanOuts(runDir, 'INVALID_ARGUMENT')) {
        const { run, pushed } = await withRunLock(dir, async () => {
          const run = await readRun(dir, loadCatalogue());
          return { run, pushed: await pushRun(run, opts.remote, opts.branch) };
        });
        if (pushed.conflicts.length > 0 || pushed.refused.length > 0) process.exitCode = 1;
        if (opts.json) {
          printOut(
            `${JSON.stringify({
              fanout: run.manifest.fanoutId,
              remote: pushed.remote,
              branch: pushed.branch,
              commit: pushed.commit ?? null,
              carried: pushed.merged.map((f) => ({ fork_id: f.forkId, commit: f.commit })),
              conflicts: pushed.conflicts.map(({ fork, files }) => ({ fork_id: fork.forkId, files })),
              refused: pushed.refused.map(({ fork, paths }) => ({ fork_id: fork.forkId, paths })),
              skipped: pushed.skipped.map(({ fork, why }) => ({ fork_id: fork.forkId, why })),
            })}\n`,
          );
          continue;
        }
        const lines = [
          ...pushed.conflicts.map(({ fork, files }) => `not carried ${fork.short}: conflicts in ${files.join(', ')}`),
          ...pushed.refused.map(({ fork, paths }) => `not carried ${fork.short}: brings ${paths.join(', ')}`),
          pushed.commit
            ? `${pushed.remote} ${pushed.branch}: ${pushed.commit.slice(0, 10)} carries ${pushed.merged.length} fork(s) (${pushed.merged.map((f) => f.short).join(', ')})`
            : `${run.manifest.fanoutId}: no completed fork with a change; nothing pushed`,
        ];
        printOut(`${lines.join('\n')}\n`);
      }
    });
}
