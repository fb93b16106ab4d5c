import { writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { TREE_SITTER_PACKAGE } from '../../core/tools/checks/file-check.ts';
import { z } from 'zod';
import { ForkcacheError } from '../../core/util/errors.ts';
import { DEFAULT_MODEL } from '../../core/models/defaults.ts';
import { intFlag, parseFlags } from '../flags.ts';
import { flag, FLAGS } from '../flag-table.ts';
import { planFromGlob } from '../plan/from-glob.ts';
import { printOut, printErr } from '../terminal-safe.ts';

const optionsSchema = z.object({
  workspace: z.string().min(1).optional(),
  repos: z.array(z.string().min(1)).min(1).optional(),
  files: z.string({ error: 'required: a glob of the files, e.g. "src/**/*.ts"' }).min(1),
  grep: z.string().min(1).optional(),
  directive: z.string({ error: 'required: the directive, with {file} where the file goes' }).min(1),
  check: z.string().min(1).optional(),
  checkRetries: intFlag.optional(),
  requireChange: z.boolean().optional(),
  isolation: z.enum(['none', 'worktree'], { error: 'expected none or worktree' }).optional(),
  sparse: z.boolean().optional(),
  integrationCheck: FLAGS.integrationCheck.schema,
  checkLocal: z.boolean().optional(),
  model: FLAGS.model.schema.unwrap().default(DEFAULT_MODEL),
  out: FLAGS.out.schema,
});

/** Register `forkcache plan`: a run plan with one directive per file of a glob. */
export function registerPlanCommand(program: Command): void {
  program
    .command('plan')
    .description(
      'write a run plan with one directive per matching file (sorted), a default parent (system prompt, tool declarations, a first message naming the repository and the task) and an optional per-fork check (docs/plans.md)',
    )
    .option('--workspace <dir>', 'the repository the forks work in (one; or --repos)')
    .option(
      '--repos <dirs>',
      "several repositories: folders, a comma-separated list, or a glob of folders ('DIR/*'); repeatable. --files applies inside each; every fork works in its own repository's worktree (docs/plans.md)",
      (value: string, previous: string[] | undefined) => [...(previous ?? []), value],
    )
    .requiredOption(
      '--files <glob>',
      'files relative to the workspace, e.g. "src/**/*.ts" (.git, node_modules and .forkcache are skipped unless named)',
    )
    .option(
      '--grep <regex>',
      'keep only files with a line matching this regular expression (RE2 syntax, as the grep tool)',
    )
    .requiredOption(
      '--directive <template>',
      'each fork\'s directive; {file} is replaced by its file, e.g. "rename a to b in {file}"',
    )
    .option(
      '--check <command>',
      "a shell command run in each fork's workspace after it reports done; {file} is replaced, shell-quoted",
    )
    .option(
      '--require-change',
      'every fork must change its file: one that changed none ends no_change and counts as not done',
    )
    .option('--check-retries <n>', "times a failing check's output goes back to the fork (default 1)")
    .option(
      '--isolation <mode>',
      'none (default: the forks share the workspace) or worktree (each fork in its own git worktree and branch, for review and merge; the workspace must be a git repository with a commit)',
    )
    .option(
      '--sparse',
      "with --isolation worktree: each fork's worktree holds only its file (less disk; the fork and its check see no other file)",
    )
    .addOption(flag('integrationCheck'))
    .option('--check-local', "the per-fork check is advisory: the integration check decides (the plan's checkLocal)")
    .addOption(flag('model', DEFAULT_MODEL))
    .addOption(flag('out'))
    .action(async (raw: Record<string, unknown>) => {
      const opts = parseFlags(optionsSchema, raw);
      const written = await planFromGlob(opts);
      const { files, writtenCheck, perRepo } = written;
      if (opts.integrationCheck !== undefined && opts.isolation !== 'worktree')
        throw new ForkcacheError(
          'INVALID_FLAG',
          "--integration-check: needs --isolation worktree (it merges the forks' branches)",
          { data: { field: '--integration-check' } },
        );
      const plan = {
        ...written.plan,
        ...(opts.integrationCheck === undefined ? {} : { integrationCheck: opts.integrationCheck }),
        ...(opts.checkLocal === true ? { checkLocal: true } : {}),
      };
      const text = `${JSON.stringify(plan, null, 2)}\n`;
      if (opts.out === undefined) printOut(text);
      else writeFileSync(opts.out, text);
      if (writtenCheck !== undefined)
        printErr(
          `forkcache plan: check written for the rename: ${writtenCheck} (give --check to change it)${
            writtenCheck.startsWith('forkcache check-file')
              ? ''
              : `; ${TREE_SITTER_PACKAGE} is not installed, so it checks words, strings and comments included: npm install ${TREE_SITTER_PACKAGE} for the parser check`
          }\n`,
        );
      if (perRepo) printErr(`forkcache plan: ${perRepo.map((r) => `${r.repo} ${r.files} file(s)`).join(', ')}\n`);
      printErr(
        `forkcache plan: ${files.length} directive(s), one per file${opts.out === undefined ? '' : `, written to ${opts.out}`}; next: forkcache run ${opts.out ?? 'PLAN.json'} (add --dry-run for the cost first)\n`,
      );
    });
}
