import type { Command } from 'commander';
import { directiveParts } from '../board/board-state.ts';
import { z } from 'zod';
import { loadCatalogue } from '../../core/models/catalogue.ts';
import { locateFanOuts } from '../../core/run-dir/locate.ts';
import { parseFlags } from '../flags.ts';
import { flag, FLAGS } from '../flag-table.ts';
import { isDoneStatus } from '../../core/util/fork-status.ts';
import { integrationStatuses, readIntegration } from '../../core/run-dir/integration.ts';
import { type ForkReview, readRunRepos, type RunReview } from '../review/run-forks.ts';
import { printOut } from '../terminal-safe.ts';

const optionsSchema = z.object({
  json: FLAGS.json.schema,
  repo: FLAGS.repo.schema,
  modelTable: FLAGS.modelTable.schema,
  notDone: z.boolean().default(false),
});

/** Past this many forks, the table ends with its summary again and says how to see only the forks not done. */
const LONG_RUN = 40;

const usd = (n: number | null): string => (n === null ? 'unpriced' : `$${n.toFixed(4)}`);
const clip = (text: string, max: number): string => {
  const line = text.split('\n')[0]!.trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
};

/**
 * The directives as they differ: when they share an opening (`rename fetchData to loadData in `),
 * it is shown once in the header and each row keeps what follows (the file), so a cut at the
 * column's width never hides the only part that tells two forks apart.
 */
const MIN_COMMON = 24;

export function distinctParts(directives: readonly string[]): { common: string; parts: string[] } {
  const lines = directives.map((d) => d.split('\n')[0]!.trim());
  if (lines.length < 2) return { common: '', parts: lines };
  let common = lines[0]!;
  for (const line of lines) while (!line.startsWith(common)) common = common.slice(0, -1);
  // whole words only: `…in src/a` and `…in src/b` share `…in src/`, keep the path whole
  const cut = common.lastIndexOf(' ') + 1;
  common = common.slice(0, cut);
  // a short opening (`rename `) hides nothing worth a header line
  if (common.length < MIN_COMMON) return { common: '', parts: lines };
  return { common, parts: lines.map((l) => l.slice(common.length)) };
}

const DIRECTIVE_WIDTH = 60;

/**
 * A directive in its column: whole when it fits; else cut in the middle, never at its end,
 * which names the file; and where another directive names the same file, the words it does
 * not share with it first, then the file (`isFunction to isFn · …/lexers/python.py`).
 */
export function directiveCell(text: string, part: { file: string; differs: string | undefined }): string {
  const line = text.split('\n')[0]!.trim();
  if (line.length <= DIRECTIVE_WIDTH) return line;
  const tail = (s: string, n: number): string => (s.length <= n ? s : `…${s.slice(s.length - n + 1)}`);
  if (part.differs !== undefined) {
    const differs = clip(part.differs, DIRECTIVE_WIDTH - Math.min(part.file.length, 20) - 3);
    return `${differs} · ${tail(part.file, DIRECTIVE_WIDTH - differs.length - 3)}`;
  }
  const keep = Math.min(line.length, Math.max(part.file.length, 20));
  const end = tail(line, keep);
  return `${clip(line, DIRECTIVE_WIDTH - end.length)}${end.startsWith('…') ? end.slice(1) : end}`;
}

function gitColumn(fork: ForkReview): string {
  if (fork.branch === undefined) return '';
  if (fork.commit === undefined) return `${fork.branch} (no branch)`;
  return `${fork.branch} ${fork.commit === null ? '(no change)' : fork.commit.slice(0, 10)}`;
}

/** The table of one fan-out: a row per fork, the forks that are not done named under it. */
export function formatRun(run: RunReview, options: { notDone?: boolean } = {}): string {
  const worktree = run.isolation === 'worktree';
  const head = ['fork', 'status', 'turns', 'cost', 'files', ...(worktree ? ['branch / commit'] : []), 'directive'];
  const { common, parts } = distinctParts(run.forks.map((f) => f.directive));
  const labels = directiveParts(run.forks.map((f) => f.directive));
  const statuses = run.forks.map((f) => f.status);
  const allUnchanged = statuses.length > 0 && statuses.every((s) => s === 'no_change');
  const isNotDone = (f: ForkReview): boolean =>
    allUnchanged || (f.status !== 'integrated' && !isDoneStatus(f.status, run.manifest.requireChange === true));
  const shown = run.forks.map((f, i) => ({ f, i })).filter(({ f }) => options.notDone !== true || isNotDone(f));
  const rows = shown.map(({ f, i }) => [
    f.short,
    f.status,
    String(f.turns),
    usd(f.costUsd),
    String(f.filesChanged.length),
    ...(worktree ? [gitColumn(f)] : []),
    directiveCell(common === '' ? f.directive : `…${parts[i]!}`, labels[i]!),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]): string =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  const notDone = run.forks.filter(isNotDone);
  // a run of hundreds of forks: counts by status, before the rows and again after them
  const counts = new Map<string, number>();
  for (const status of statuses) counts.set(status, (counts.get(status) ?? 0) + 1);
  const summary = `by status: ${[...counts].map(([status, count]) => `${status} ${count}`).join(', ')}; not done ${notDone.length}`;
  const long = run.forks.length > LONG_RUN;
  const completed = statuses.filter((s) => s === 'completed').length;
  // an integrated run: the integration decides (a fork ends `integrated` or `left_out`)
  const integrated = statuses.filter((s) => s === 'integrated').length;
  const leftOut = statuses.filter((s) => s === 'left_out').length;
  const done =
    integrated + leftOut > 0
      ? `${integrated} integrated${leftOut > 0 ? `, ${leftOut} left out` : ''}${completed > 0 ? `, ${completed} completed` : ''}`
      : `${completed} completed`;
  const unchanged = statuses.filter((s) => s === 'no_change').length;
  const total = run.forks.reduce<number | null>(
    (sum, f) => (sum === null || f.costUsd === null ? null : sum + f.costUsd),
    0,
  );
  return [
    `${run.manifest.fanoutId}${run.repo ? ` repo ${run.repo.name}` : ''}: ${run.forks.length} forks, ${done}${unchanged > 0 ? `, ${unchanged} changed no file` : ''}, ${usd(total)}` +
      (worktree ? `, worktrees from ${run.base ? run.base.slice(0, 10) : 'an unrecorded base'}` : ', shared workspace'),
    ...(common === '' ? [] : [`directives: "${clip(common, 100)}…"`]),
    summary,
    line(head),
    ...rows.map(line),
    ...notDone.map((f) => `not done  ${f.short}  ${f.status}${f.error ? `: ${f.error.code}: ${f.error.message}` : ''}`),
    ...(long ? [summary, ...(options.notDone === true ? [] : ['only the forks not done: --not-done'])] : []),
  ].join('\n');
}

/** `--json`: the same facts, per fork. */
function jsonRun(run: RunReview): Record<string, unknown> {
  return {
    fanout: run.manifest.fanoutId,
    ...(run.repo ? { repo: run.repo.name, repo_path: run.repo.top } : {}),
    dir: run.dir,
    isolation: run.isolation,
    base: run.base ?? null,
    forks: run.forks.map((f) => ({
      fork_id: f.forkId,
      directive: f.directive,
      status: f.status,
      ...(f.endStatus === undefined ? {} : { end_status: f.endStatus }),
      turns: f.turns,
      cost_usd: f.costUsd,
      files_changed: f.filesChanged,
      ...(f.branch === undefined ? {} : { branch: f.branch, commit: f.commit ?? null }),
      error: f.error ?? null,
    })),
  };
}

/** Register `forkcache status RUN`. */
export function registerStatusCommand(program: Command): void {
  program
    .command('status')
    .description(
      'per fork of a run: directive, status, turns, cost, files changed, and its branch and commit under worktrees',
    )
    .argument('<run-dir>', 'a run directory, or a runs directory holding several')
    .addOption(flag('json'))
    .addOption(flag('repo'))
    .option('--not-done', 'only the forks that are not done (the summary counts them all)')
    .addOption(flag('modelTable'))
    .action(async (runDir: string, raw: Record<string, unknown>) => {
      const opts = parseFlags(optionsSchema, raw);
      const catalogue = loadCatalogue(opts.modelTable);
      const out: string[] = [];
      for (const dir of locateFanOuts(runDir, 'INVALID_RUN_DIR')) {
        // an integrated run: each fork's integration status (integrated, left_out) over its own
        const integrated = integrationStatuses(readIntegration(dir));
        for (const view of await readRunRepos(dir, catalogue, { files: true, repo: opts.repo })) {
          const run = {
            ...view,
            forks: view.forks.map((f) => {
              const found = integrated.get(f.forkId);
              return found ? { ...f, status: found.status, endStatus: f.status } : f;
            }),
          };
          out.push(opts.json ? JSON.stringify(jsonRun(run)) : formatRun(run, { notDone: opts.notDone }));
        }
      }
      printOut(`${out.join(opts.json ? '\n' : '\n\n')}\n`);
    });
}
