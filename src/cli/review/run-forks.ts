import { join, resolve } from 'node:path';
import { REPO_FIELD } from '../../core/engine/fan-out/repos.ts';
import { forkIdOf } from '../../core/engine/fan-out/types.ts';
import { ForkcacheError } from '../../core/util/errors.ts';
import { costNano, nanoToUsd } from '../../core/ledger/cost.ts';
import { findModel, type ModelCatalogue } from '../../core/models/catalogue.ts';
import { EVENTS_FILE, transcriptPath } from '../../core/run-dir/files.ts';
import { readJsonl, recordType } from '../../core/run-dir/jsonl.ts';
import { type Manifest, readFanOutDir } from '../../core/run-dir/manifest.ts';
import { eventSchemas } from '../../core/run-dir/schemas.ts';
import { readTranscript } from '../../core/run-dir/transcript-reader.ts';
import { HostGit } from '../../core/tools/git/host-git.ts';
import { BRANCH_PREFIX, branchOf } from '../../core/tools/git/worktree.ts';

/** One fork of a run as `status`, `diff`, `merge` and `clean` see it. */
export interface ForkReview {
  forkId: string;
  /** The fork's place in the plan (its directive's index). */
  index: number;
  /** A plan over several repositories: the fork's (its `repo` field). */
  repo?: string;
  /** `f03`: what a user types to name the fork. */
  short: string;
  directive: string;
  /** The transcript's last `end` status; `unfinished` (turns, no end) or `not started`. */
  status: string;
  /** `status` shows an integration status (`integrated`, `left_out`): the fork's own end status. */
  endStatus?: string;
  turns: number;
  /** USD of every billed request; null when the model is not priced. */
  costUsd: number | null;
  filesChanged: string[];
  error: { code: string; message: string } | undefined;
  /** Worktree runs: the fork's branch, and its commit (null: no change; undefined: no branch). */
  branch?: string;
  commit?: string | null | undefined;
}

export interface RunReview {
  dir: string;
  manifest: Manifest;
  isolation: 'none' | 'worktree';
  /** Worktree runs: the commit every fork started from (old runs did not record it). */
  base: string | undefined;
  forks: ForkReview[];
  /**
   * A plan over several repositories: the one this view is of (its name in the plan and its
   * top), `base` that repository's and `forks` only those working in it.
   */
  repo?: { name: string; top: string };
}

/** The files each fork reported changing (its last `fork-end` event: a resume appends another). */
function filesFromEvents(dir: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  let lines: ReturnType<typeof readJsonl>;
  try {
    lines = readJsonl(join(dir, EVENTS_FILE), 'fan-out events');
  } catch {
    return out; // no events (a run killed at once): files stay unknown
  }
  for (const { value } of lines) {
    if (recordType(value) !== 'fork-end') continue;
    const parsed = eventSchemas['fork-end'].safeParse(value);
    if (parsed.success) out.set(parsed.data.forkId, parsed.data.filesChanged);
  }
  return out;
}

function costOf(
  transcript: ReturnType<typeof readTranscript>,
  model: string,
  catalogue: ModelCatalogue,
): number | null {
  const info = findModel(model, catalogue);
  if (!info || info.prices.length === 0) return null;
  const requests = [...transcript.turns.map((t) => t.request), ...transcript.failedAttempts];
  const nano = requests.reduce((sum, r) => sum + costNano(r.usage, info, r.sentAt, catalogue).total, 0);
  return nanoToUsd(nano);
}

/** The repository of a worktree run (where its branches live). */
export function repoOfRun(run: RunReview): Promise<HostGit> {
  const where = run.repo?.top ?? run.manifest.worktrees?.repo ?? run.manifest.engine.workspace;
  return HostGit.open(where, 'INVALID_RUN_DIR', `run ${run.dir}: its repository ${where}`);
}

/**
 * Read a run directory for review: the manifest, every fork's transcript, and git's
 * branches. `files`: under worktrees, the files each branch changed (a diff per fork).
 */
export async function readRun(
  dir: string,
  catalogue: ModelCatalogue,
  options: { files?: boolean } = {},
): Promise<RunReview> {
  const { manifest, snapshot } = readFanOutDir(dir);
  const files = filesFromEvents(dir);
  const forks: ForkReview[] = manifest.directives.map((directive, i) => {
    const forkId = forkIdOf(manifest.fanoutId, i);
    const transcript = readTranscript(transcriptPath(dir, forkId));
    const error = transcript.end?.error as { code?: unknown; message?: unknown } | undefined;
    const repo = manifest.fields?.[i]?.[REPO_FIELD];
    return {
      forkId,
      index: i,
      ...(repo === undefined ? {} : { repo }),
      short: forkId.slice(manifest.fanoutId.length + 1),
      directive,
      status: transcript.end?.status ?? (transcript.turns.length > 0 ? 'unfinished' : 'not started'),
      turns: transcript.turns.length,
      costUsd: costOf(transcript, snapshot.model, catalogue),
      filesChanged: files.get(forkId) ?? [],
      error: error ? { code: String(error.code), message: String(error.message) } : undefined,
    };
  });
  const run: RunReview = {
    dir,
    manifest,
    isolation: manifest.engine.isolation,
    base: manifest.worktrees?.base,
    forks,
  };
  if (run.isolation !== 'worktree' || manifest.engine.repos) return run;
  await readBranches(run, await repoOfRun(run), options);
  return run;
}

/** Each fork's branch and commit (and, with `files`, the files its branch changed). */
async function readBranches(run: RunReview, repo: HostGit, options: { files?: boolean }): Promise<void> {
  const tips = await repo.branches(BRANCH_PREFIX);
  for (const fork of run.forks) {
    fork.branch = branchOf(fork.forkId);
    const tip = tips.get(fork.branch);
    fork.commit = tip === undefined ? undefined : tip === run.base ? null : tip;
    if (options.files && tip && run.base && tip !== run.base)
      fork.filesChanged = (await repo.out(['diff', '--name-only', '-z', '--no-renames', run.base, tip]))
        .split('\0')
        .filter(Boolean);
  }
}

/** The repositories of a plan over several (`engine.repos`); undefined for a run in one. */
export function runRepos(run: RunReview): readonly string[] | undefined {
  return run.manifest.engine.repos;
}

/**
 * A run as `status`, `diff`, `merge`, `clean` and `push` go through it: one view per repository
 * for a plan over several (each with its repository, base and forks), else the run itself.
 * `repo`: only that repository's view (`--repo NAME`; a name the run does not have is bad input).
 */
export async function readRunRepos(
  dir: string,
  catalogue: ModelCatalogue,
  options: { files?: boolean; repo?: string | undefined } = {},
): Promise<RunReview[]> {
  const run = await readRun(dir, catalogue, options);
  const repos = runRepos(run);
  if (repos === undefined) {
    if (options.repo !== undefined)
      throw new ForkcacheError(
        'INVALID_FLAG',
        `--repo: ${run.manifest.fanoutId} ran in one repository (${run.manifest.worktrees?.repo ?? run.manifest.engine.workspace}); --repo is for a plan over several`,
        { data: { field: '--repo' } },
      );
    return [run];
  }
  if (options.repo !== undefined && !repos.includes(options.repo))
    throw new ForkcacheError(
      'INVALID_FLAG',
      `--repo: ${options.repo} is not a repository of ${run.manifest.fanoutId} (its repos: ${repos.join(', ')})`,
      { data: { field: '--repo' } },
    );
  const views: RunReview[] = [];
  for (const name of repos) {
    if (options.repo !== undefined && name !== options.repo) continue;
    const recorded = run.manifest.repoWorktrees?.[name];
    const top = recorded?.repo ?? resolve(run.manifest.engine.workspace, name);
    const view: RunReview = {
      ...run,
      base: recorded?.base,
      forks: run.forks.filter((f) => f.repo === name),
      repo: { name, top },
    };
    // a run stopped before its first worktree recorded no base: its forks have no branches yet
    if (run.isolation === 'worktree') await readBranches(view, await repoOfRun(view), options);
    views.push(view);
  }
  return views;
}

/** The forks a user named (`f03`, `3`, or the whole id); all of them when none is named. */
export function pickForks(run: RunReview, names: readonly string[]): ForkReview[] {
  if (names.length === 0) return run.forks;
  return names.map((name) => {
    const found = run.forks.find(
      (f) => f.forkId === name || f.short === name || (/^\d+$/.test(name) && f.short === `f${name.padStart(2, '0')}`),
    );
    if (!found)
      throw new ForkcacheError(
        'INVALID_FLAG',
        `fork ${name}: not a fork of ${run.manifest.fanoutId} (its forks: ${run.forks[0]?.short}…${run.forks.at(-1)?.short})`,
        { data: { field: 'fork' } },
      );
    return found;
  });
}
