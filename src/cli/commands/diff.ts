import { resolve } from 'node:path';
import type { Command } from 'commander';
import { z } from 'zod';
import { loadCatalogue } from '../../core/models/catalogue.ts';
import { locateFanOuts } from '../../core/run-dir/locate.ts';
import { HostGit } from '../../core/tools/git/host-git.ts';
import { parseFlags } from '../flags.ts';
import { flag, FLAGS } from '../flag-table.ts';
import { type ForkReview, pickForks, readRunRepos, repoOfRun, type RunReview } from '../review/run-forks.ts';
import { printOut } from '../terminal-safe.ts';

const optionsSchema = z.object({ stat: z.boolean().default(false), repo: FLAGS.repo.schema });

// never an external diff program or a textconv filter: their names come from attributes in the fork's tree
const DIFF = ['diff', '--no-ext-diff', '--no-textconv', '--no-color'];

const header = (fork: ForkReview, what: string): string =>
  `# ${fork.forkId} (${fork.status}) ${what}\n#   ${fork.directive.split('\n')[0]}\n`;

/** A worktree run: each fork's branch against the run's base commit, as a unified diff. */
async function worktreeDiff(run: RunReview, forks: ForkReview[], stat: boolean): Promise<string> {
  const repo = await repoOfRun(run);
  const parts: string[] = [];
  for (const fork of forks) {
    if (!fork.commit) {
      parts.push(header(fork, fork.commit === null ? 'no change' : `no branch ${fork.branch}`));
      continue;
    }
    const from = run.base ?? (await repo.out(['merge-base', 'HEAD', fork.commit]));
    const diff = await repo.run([...DIFF, ...(stat ? ['--stat'] : []), from, fork.commit]);
    parts.push(`${header(fork, `${fork.branch} ${from.slice(0, 10)}..${fork.commit.slice(0, 10)}`)}${diff.stdout}`);
  }
  return parts.join('\n');
}

/**
 * A shared-workspace run: forks wrote into one tree, so their changes cannot be told apart.
 * Shown: the files each fork wrote, then (in a git repository) one combined diff of those
 * files against HEAD.
 */
async function sharedDiff(run: RunReview, forks: ForkReview[], stat: boolean): Promise<string> {
  const parts = forks.map(
    (f) => `${header(f, 'shared workspace')}#   files written: ${f.filesChanged.join(', ') || 'none'}\n`,
  );
  const files = [...new Set(forks.flatMap((f) => f.filesChanged))].sort();
  const workspace = run.manifest.engine.workspace;
  const repo = files.length > 0 ? await HostGit.open(workspace, 'INVALID_FLAG').catch(() => undefined) : undefined;
  if (repo) {
    const diff = await repo.run([
      ...DIFF,
      ...(stat ? ['--stat'] : []),
      'HEAD',
      '--',
      ...files.map((f) => resolve(workspace, f)),
    ]);
    parts.push(
      `# the combined change of these files in ${workspace}, against HEAD (forks share files: no per-fork diff)\n${
        diff.stdout ||
        (await whyEmpty(
          repo,
          run,
          files.map((f) => resolve(workspace, f)),
        ))
      }`,
    );
  } else if (files.length > 0) parts.push(`# ${workspace} is not in a git repository: no diff to show\n`);
  return parts.join('\n');
}

/**
 * The combined diff is against HEAD, so once the forks' changes are committed (or undone) it
 * is empty: say which, instead of printing nothing (issue 34).
 */
async function whyEmpty(repo: HostGit, run: RunReview, paths: string[]): Promise<string> {
  const since = (
    await repo.run(['log', '-1', '--format=%H %cI', `--since=${run.manifest.createdAt}`, 'HEAD', '--', ...paths])
  ).stdout.trim();
  if (since)
    return `# empty: these files are as HEAD has them, and commit ${since.slice(0, 10)} (${since.slice(41)}, after the run) changed them; a shared workspace keeps no copy of the run's own change, so see \`git show ${since.slice(0, 10)}\` (or run with isolation: worktree for per-fork diffs)\n`;
  return `# empty: these files are as HEAD has them (the forks' changes were undone, or committed in a commit older than the run)\n`;
}

/** Register `forkcache diff RUN [FORK...]`. */
export function registerDiffCommand(program: Command): void {
  program
    .command('diff')
    .description(
      "each fork's change as a unified diff against the run's base commit (worktree runs); for a shared workspace, the files each fork wrote and their combined diff",
    )
    .argument('<run-dir>', 'a run directory, or a runs directory holding several')
    .argument('[forks...]', 'forks to show (f03, 3 or the whole id); default all')
    .option('--stat', 'a diff stat instead of the diff')
    .addOption(flag('repo'))
    .action(async (runDir: string, names: string[], raw: Record<string, unknown>) => {
      const opts = parseFlags(optionsSchema, raw);
      for (const dir of locateFanOuts(runDir, 'INVALID_RUN_DIR')) {
        const views = await readRunRepos(dir, loadCatalogue(), { files: true, repo: opts.repo });
        // a fork is named across the run's repositories (its id is the run's, not the repository's)
        const picked = new Set(pickForks({ ...views[0]!, forks: views.flatMap((v) => v.forks) }, names));
        for (const run of views) {
          const forks = run.forks.filter((f) => picked.has(f));
          if (run.repo && forks.length === 0) continue;
          const text =
            run.isolation === 'worktree'
              ? await worktreeDiff(run, forks, opts.stat)
              : await sharedDiff(run, forks, opts.stat);
          printOut(run.repo ? `# repo ${run.repo.name} (${run.repo.top})\n${text}` : text);
        }
      }
    });
}
