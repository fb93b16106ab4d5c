import { existsSync } from 'node:fs';
import { toWireError } from '../../util/errors.ts';
import type { ForkOutcome } from '../../loop/types.ts';
import { emptyOutcome, FRESH_START, mergeOutcome, runWithRestarts, type StartPoint } from '../../pool/fork-attempts.ts';
import { type DispatchContext, runForkInWorker } from '../../pool/fork-dispatch.ts';
import { loadRunKey } from '../../run-dir/run-key.ts';
import { JsonlTranscript } from '../../run-dir/transcript.ts';
import type { Worktree, WorktreeResult } from '../../tools/git/worktree.ts';
import type { FanOutDeps, ForkSpec } from './types.ts';
import type { FanOutWorktrees } from './worktrees.ts';

/** One fork once it holds a slot. */
interface SlotRun {
  deps: FanOutDeps;
  spec: ForkSpec;
  forkId: string;
  directive: string;
  /** The dispatch context, once the workspace is known (the fork's worktree, when isolated). */
  context: (workspace: string) => DispatchContext;
  onRestart: (attempt: number, start: StartPoint) => void;
  /** The fan-out's worktrees, under `isolation: 'worktree'`. */
  worktrees?: FanOutWorktrees | undefined;
  /** A sparse worktree's one file (the directive's `file`), when the run asked for sparse worktrees. */
  sparseFile?: string | undefined;
  /** The fork's cancel: it also ends a wait for a worktree. */
  signal?: AbortSignal | undefined;
  /** A plan over several repositories: the fork's (its `repo` field). */
  repoName?: string | undefined;
}

/**
 * A fork whose worktree could not be committed (git refuses a path the fork made: `.git.`, a
 * symlinked `.gitmodules`, a FIFO where a file was) is failed, and its transcript must say so:
 * the worker wrote its `end` before the commit, and `status`, `resume` and `merge` read the
 * last `end` (a `completed` one made resume skip the fork and merge see "no change").
 */
function failedAfterCommit(transcriptPath: string | undefined, outcome: ForkOutcome): ForkOutcome {
  if (transcriptPath !== undefined && existsSync(transcriptPath))
    new JsonlTranscript(transcriptPath, loadRunKey()).end(outcome);
  return outcome;
}

/**
 * What the plan's checks created and the fork did not change since (the last check's record
 * holds them all: src/core/tools/checks/outputs.ts); a file the fork wrote with its file tools is its
 * own, whatever a check did to it.
 */
function checkOutputs(outcome: ForkOutcome): string[] {
  const written = new Set(outcome.filesChanged);
  return (outcome.checks?.at(-1)?.outputs ?? []).filter((p) => !written.has(p));
}

const commitMessage = (run: Pick<SlotRun, 'forkId' | 'directive'>): string =>
  `forkcache ${run.forkId}: ${run.directive.slice(0, 200)}`;

/**
 * A resumed fork that needs no more requests: under worktrees its changes are committed all
 * the same (the run may have stopped between the fork's last turn and its commit).
 */
export async function finishInSlot(
  run: Pick<SlotRun, 'forkId' | 'directive' | 'worktrees' | 'sparseFile' | 'repoName'> & {
    transcriptPath: string | undefined;
  },
  outcome: ForkOutcome,
): Promise<{ outcome: ForkOutcome; worktree?: WorktreeResult }> {
  if (!run.worktrees) return { outcome };
  try {
    // its worktree went with its commit: nothing to commit again, no worktree to make
    const committed = await run.worktrees.committed(run.forkId, run.repoName);
    if (committed) return { outcome, worktree: committed };
    const tree = await run.worktrees.open(run.forkId, run.sparseFile, { repoName: run.repoName });
    return {
      outcome,
      worktree: await run.worktrees.close(tree, commitMessage(run), run.repoName, checkOutputs(outcome)),
    };
  } catch (err) {
    return {
      outcome: failedAfterCommit(run.transcriptPath, { ...outcome, status: 'failed', error: toWireError(err) }),
    };
  }
}

/**
 * Run a fork in its slot: open its worktree when isolated, run its attempts (a dead worker
 * restarts from the transcript), then commit the worktree. Every ending is an outcome.
 */
export async function runForkInSlot(run: SlotRun): Promise<{ outcome: ForkOutcome; worktree?: WorktreeResult }> {
  const { spec } = run;
  let tree: Worktree | undefined;
  try {
    if (run.worktrees)
      tree = await run.worktrees.open(run.forkId, run.sparseFile, { repoName: run.repoName, signal: run.signal });
  } catch (err) {
    // a resumed fork keeps what its earlier turns did and spent, as every other ending does
    const status = run.signal?.aborted ? 'cancelled' : 'failed';
    return { outcome: mergeOutcome(spec.start, emptyOutcome(status, toWireError(err))) };
  }
  try {
    return await runInTree(run, tree);
  } finally {
    // an ending the commit did not reach (an unexpected error) must not keep a permit
    if (tree) run.worktrees?.release(tree);
  }
}

async function runInTree(
  run: SlotRun,
  tree: Worktree | undefined,
): Promise<{ outcome: ForkOutcome; worktree?: WorktreeResult }> {
  const { deps, spec } = run;
  const ctx = run.context(tree?.workspace ?? deps.options.workspace);
  const remote = deps.remote;
  const outcome: ForkOutcome = await runWithRestarts({
    base: spec.base,
    // a remote host reads the transcript itself and reports the whole fork
    start: remote ? FRESH_START(spec.base) : spec.start,
    transcriptPath: ctx.transcriptPath,
    maxRestarts: remote ? 0 : deps.options.maxWorkerRestarts,
    aborted: () => ctx.abort.signal.aborted,
    readOnly: (name) => ctx.host?.tools.find((t) => t.name === name)?.readOnly,
    run: (start, attempt) => (remote ? remote.run(ctx) : runForkInWorker(ctx, start, attempt)),
    onRestart: run.onRestart,
  });
  if (!tree || !run.worktrees) return { outcome };
  // A cancelled fork keeps its worktree as it is, uncommitted: `resume` goes on in it (or
  // `clean` removes it). Committing and removing hundreds of worktrees after Ctrl-C is git work
  // the run would wait for, past the grace, for forks that are not done anyway.
  if (outcome.status === 'cancelled') return { outcome };
  // a tampered worktree (GIT_WORKTREE_TAMPERED) ends the fork failed, nothing committed
  const closed = await run.worktrees
    .close(tree, commitMessage(run), run.repoName, checkOutputs(outcome))
    .catch((err: unknown) => toWireError(err));
  if ('code' in closed)
    return { outcome: failedAfterCommit(ctx.transcriptPath, { ...outcome, status: 'failed', error: closed }) };
  return { outcome, worktree: closed };
}
