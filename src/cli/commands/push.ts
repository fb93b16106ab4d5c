import type { Command } from 'commander';
import { z } from 'zod';
import { loadCatalogue } from '../../core/models/catalogue.ts';
import { locateFanOuts } from '../../core/run-dir/locate.ts';
import { parseFlags } from '../flags.ts';
import { flag, FLAGS } from '../flag-table.ts';
import { printOut } from '../terminal-safe.ts';
import { checkBranchName, checkRemote, type PushLease, type PushResult, pushRun } from '../review/push-run.ts';
import { readRunRepos, type RunReview } from '../review/run-forks.ts';
import { withRunLock } from '../review/run-lock.ts';

const optionsSchema = z.object({
  remote: z.string().min(1, 'expected a remote name, e.g. origin'),
  branch: z.string().min(1).optional(),
  json: FLAGS.json.schema,
  verbose: z.boolean().default(false),
  repo: FLAGS.repo.schema,
  // `--force-with-lease` alone: the tip read just before the push; with a value: that commit
  forceWithLease: z
    .union([z.literal(true), z.string().regex(/^[0-9a-f]{7,64}$/, 'expected a commit id (hex), or no value')])
    .optional(),
});

/** Past this many, the human line gives the count of carried forks, not their ids (--verbose, --json list them). */
const LISTED_FORKS = 10;

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
    .option(
      '--force-with-lease [commit]',
      "replace a remote branch the push does not fast-forward (git's lease: only while it is still at the tip read before the push, or at COMMIT)",
    )
    .addOption(flag('json'))
    .option('--verbose', 'list every carried fork on the human line')
    .addOption(flag('repo'))
    .action(async (runDir: string, raw: Record<string, unknown>) => {
      const opts = parseFlags(optionsSchema, raw);
      if (opts.branch !== undefined) await checkBranchName(opts.branch);
      const lease: PushLease = {
        force: opts.forceWithLease !== undefined,
        expect: typeof opts.forceWithLease === 'string' ? opts.forceWithLease : undefined,
      };
      for (const dir of locateFanOuts(runDir, 'INVALID_RUN_DIR')) {
        const views = await withRunLock(dir, async () => {
          const runs = await readRunRepos(dir, loadCatalogue(), { repo: opts.repo });
          // every repository must have the remote before any is pushed
          for (const run of runs) await checkRemote(run, opts.remote);
          const done: Array<{ run: RunReview; pushed: PushResult }> = [];
          for (const run of runs) done.push({ run, pushed: await pushRun(run, opts.remote, opts.branch, lease) });
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
              ? `${pushed.remote} ${pushed.branch}: ${pushed.commit.slice(0, 10)} carries ${carried(pushed, opts.verbose)}`
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

/** `3 fork(s) (f01, f02, f03)`; past LISTED_FORKS, the count and where the ids are. */
function carried(pushed: PushResult, verbose: boolean): string {
  const count = `${pushed.merged.length} fork(s)`;
  if (verbose || pushed.merged.length <= LISTED_FORKS)
    return `${count} (${pushed.merged.map((f) => f.short).join(', ')})`;
  return `${count} (--verbose or --json lists them)`;
}
