import { createInterface } from 'node:readline/promises';
import type { Command } from 'commander';
import { z } from 'zod';
import { loadCatalogue } from '../../core/models/catalogue.ts';
import { locateFanOuts } from '../../core/run-dir/locate.ts';
import { parseFlags } from '../flags.ts';
import { flag, FLAGS } from '../flag-table.ts';
import { type CleanResult, type CleanStep, cleanRun } from '../review/clean-run.ts';
import { withRunLock } from '../review/run-lock.ts';
import { readRunRepos, type RunReview } from '../review/run-forks.ts';
import { removeFanOutSlotFiles } from '../../providers/llama-cpp/slot-files.ts';
import { printOut } from '../terminal-safe.ts';

const optionsSchema = z.object({
  dryRun: FLAGS.dryRun.schema,
  force: z.boolean().default(false),
  json: FLAGS.json.schema,
  repo: FLAGS.repo.schema,
  slotSavePath: z.string().min(1).optional(),
});

/**
 * Whether to delete branches whose work is in no other branch: `--force` says yes, a terminal
 * is asked, and anything else (a script, CI) keeps them and is told the flag.
 */
function unmergedAnswer(force: boolean): (branches: readonly CleanStep[]) => Promise<boolean> {
  return async (branches) => {
    if (force) return true;
    if (!process.stdin.isTTY || !process.stderr.isTTY) return false;
    const rl = createInterface({ input: process.stdin, output: process.stderr });
    try {
      const answer = await rl.question(
        `${branches.length} branch(es) hold work that is not merged into HEAD (${branches
          .slice(0, 3)
          .map((b) => b.name)
          .join(', ')}${branches.length > 3 ? ', …' : ''}); delete them? [y/N] `,
      );
      return /^y(es)?$/i.test(answer.trim());
    } finally {
      rl.close();
    }
  };
}

/** Register `forkcache clean RUN`. */
export function registerCleanCommand(program: Command): void {
  program
    .command('clean')
    .description(
      "remove a run's worktrees and its forkcache/<fork> branches (never a branch the run did not make), and on llama.cpp its slot files",
    )
    .argument('<run-dir>', 'a run directory, or a runs directory holding several')
    .addOption(flag('dryRun'))
    .option(
      '--force',
      'also delete branches whose work is not merged into HEAD (otherwise asked on a terminal, kept elsewhere)',
    )
    .addOption(flag('json'))
    .addOption(flag('repo'))
    .option(
      '--slot-save-path <dir>',
      "llama.cpp: the server's --slot-save-path, where a stopped fan-out may have left its KV files (default FORKCACHE_LLAMA_SLOT_SAVE_PATH)",
    )
    .action(async (runDir: string, raw: Record<string, unknown>) => {
      const opts = parseFlags(optionsSchema, raw);
      for (const dir of locateFanOuts(runDir, 'INVALID_RUN_DIR')) {
        const views = await withRunLock(dir, async () => {
          const done: Array<{ run: RunReview; result: CleanResult }> = [];
          for (const run of await readRunRepos(dir, loadCatalogue(), { repo: opts.repo }))
            done.push({ run, result: await cleanRun(run, opts.dryRun, unmergedAnswer(opts.force)) });
          return done;
        });
        for (const [i, { run, result }] of views.entries()) {
          // unmerged work left in place because nobody said --force: not done
          if (result.kept.some((k) => k.why.includes('--force'))) process.exitCode = 1;
          const slotDir = opts.slotSavePath ?? (process.env['FORKCACHE_LLAMA_SLOT_SAVE_PATH'] || undefined);
          // slot files are the fan-out's, not a repository's: removed with its first view
          const slotFiles =
            slotDir && i === 0 ? removeFanOutSlotFiles(slotDir, run.manifest.fanoutId, opts.dryRun) : [];
          const repo = run.repo ? { repo: run.repo.name } : {};
          if (opts.json) {
            printOut(
              `${JSON.stringify({ fanout: run.manifest.fanoutId, ...repo, dry_run: opts.dryRun, ...result, slot_files: slotFiles })}\n`,
            );
            continue;
          }
          const verb = opts.dryRun ? 'would remove' : 'removed';
          const lines = [
            ...result.removed.map((s) =>
              s.kind === 'worktree'
                ? `${verb} worktree ${s.name}`
                : `${verb} branch ${s.name} (${s.commit!.slice(0, 10)}${s.merged ? ', merged' : ', NOT merged: `git branch ' + s.name + ' ' + s.commit + '` brings it back'})`,
            ),
            ...slotFiles.map((name) => `${verb} slot file ${name}`),
            ...result.kept.map((k) => `kept ${k.name}: ${k.why}`),
            `${run.manifest.fanoutId}${run.repo ? ` repo ${run.repo.name}` : ''}: ${result.removed.length + slotFiles.length === 0 ? 'nothing to remove' : `${result.removed.length + slotFiles.length} ${opts.dryRun ? 'to remove' : 'removed'}`}`,
          ];
          printOut(`${lines.join('\n')}\n`);
        }
      }
    });
}
