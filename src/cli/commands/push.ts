import type { Command } from 'commander';
import { z } from 'zod';
import { loadCatalogue } from '../../models/catalogue.ts';
import { locateFanOuts } from '../../run-dir/locate.ts';
import { parseFlags } from '../flags.ts';
import { printOut } from '../terminal-safe.ts';
import { checkRemote, type PushResult, pushRun } from '../review/push-run.ts';
import { readRunRepos, type RunReview } from '../review/run-forks.ts';
import { withRunLock } from '../review/run-lock.ts';

const optionsSchema = z.object({
  remote: z.string().min(1, 'expected a remote name, e.g. origin'),
  branch: z.string().min(1).optional(),
  json: z.boolean().default(false),
  repo: z.string().min(1).optional(),
});

/** Register `forkcache push RUN --remote NAME`. */
export function registerPushCommand(program: Command): void {
  program
    .command('push')
    .description(
      "push one branch per fan-out (forkcache/<fanout>; per repository of a plan over several, to that repository's remote): the run's base with every completed fork that merges cleanly, its commit message listing them",
    )
    .argument('<run-dir>', 'a run directory of a worktree run, or a runs directory holding several')
    .requiredOption('--remote <name>', 'the git remote to push to (a name `git remote` lists)')
    .option('--branch <name>', 'the remote branch (default forkcache/<fanout>; one fan-out only)')
    .option('--json', 'print one JSON object per fan-out (per repository of a plan over several)')
    .option('--repo <name>', 'a plan over several repositories: only this one')
    .action(async (runDir: string, raw: Record<string, unknown>) => {
      const opts = parseFlags(optionsSchema, raw);
      for (const dir of locateFanOuts(runDir, 'INVALID_ARGUMENT')) {
        const views = await withRunLock(dir, async () => {
          const runs = await readRunRepos(dir, loadCatalogue(), { repo: opts.repo });
          // every repository must have the remote before any is pushed
          for (const run of runs) await checkRemote(run, opts.remote);
          const done: Array<{ run: RunReview; pushed: PushResult }> = [];
          for (const run of runs) done.push({ run, pushed: await pushRun(run, opts.remote, opts.branch) });
          return done;
        });
        for (const { run, pushed } of views) {
          if (pushed.conflicts.length > 0 || pushed.refused.length > 0) process.exitCode = 1;
          if (opts.json) {
            printOut(
              `${JSON.stringify({
                fanout: run.manifest.fanoutId,
                ...(run.repo ? { repo: run.repo.name, repo_path: run.repo.top } : {}),
                remote: pushed.remote,
                branch: pushed.branch,
                commit: pushed.commit ?? null,
                carried: pushed.merged.map((f) => ({ fork_id: f.forkId, commit: f.commit })),
                conflicts: pushed.conflicts.map(({ fork, files }) => ({ fork_id: fork.forkId, files })),
                refused: pushed.refused.map(({ fork, paths }) => ({ fork_id: fork.forkId, paths })),
                skipped: pushed.skipped.map(({ fork, why }) => ({ fork_id: fork.forkId, why })),
                ...(run.repo ? { description: pushed.description ?? null } : {}),
              })}\n`,
            );
            continue;
          }
          const lines = [
            ...(run.repo ? [`repo ${run.repo.name} (${run.repo.top})`] : []),
            ...pushed.conflicts.map(({ fork, files }) => `not carried ${fork.short}: conflicts in ${files.join(', ')}`),
            ...pushed.refused.map(({ fork, paths }) => `not carried ${fork.short}: brings ${paths.join(', ')}`),
            pushed.commit
              ? `${pushed.remote} ${pushed.branch}: ${pushed.commit.slice(0, 10)} carries ${pushed.merged.length} fork(s) (${pushed.merged.map((f) => f.short).join(', ')})`
              : `${run.manifest.fanoutId}: no completed fork with a change; nothing pushed`,
            // a plan over several repositories: each branch's description (its commit message) is shown
            ...(run.repo && pushed.description
              ? pushed.description
                  .trimEnd()
                  .split('\n')
                  .map((l) => `  ${l}`)
              : []),
          ];
          printOut(`${lines.join('\n')}\n`);
        }
      }
    });
}
