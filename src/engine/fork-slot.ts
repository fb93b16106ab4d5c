import { join } from 'node:path';
import { toWireError } from '../errors.ts';
import type { ForkOutcome } from '../loop/types.ts';
import { emptyOutcome, FRESH_START, runWithRestarts, type StartPoint } from '../pool/fork-attempts.ts';
import { type DispatchContext, runForkInWorker } from '../pool/fork-dispatch.ts';
import { closeWorktree, openWorktree, type Worktree, type WorktreeResult } from '../tools/worktree.ts';
import type { FanOutDeps, ForkSpec } from './fan-out-types.ts';

/** One fork once it holds a slot. */
export interface SlotRun {
  deps: FanOutDeps;
  spec: ForkSpec;
  forkId: string;
  directive: string;
  /** The dispatch context, once the workspace is known (the fork's worktree, when isolated). */
  context: (workspace: string) => DispatchContext;
  onRestart: (attempt: number, start: StartPoint) => void;
}

/**
 * Run a fork in its slot: open its worktree when isolated, run its attempts (a dead worker
 * restarts from the transcript), then commit the worktree. Every ending is an outcome.
 */
export async function runForkInSlot(run: SlotRun): Promise<{ outcome: ForkOutcome; worktree?: WorktreeResult }> {
  const { deps, spec } = run;
  let tree: Worktree | undefined;
  try {
    if (deps.options.isolation === 'worktree' && deps.runDir)
      tree = await openWorktree(deps.options.workspace, join(deps.runDir, 'worktrees'), run.forkId);
  } catch (err) {
    return { outcome: emptyOutcome('failed', toWireError(err)) };
  }
  const ctx = run.context(tree?.workspace ?? deps.options.workspace);
  const remote = deps.remote;
  const outcome: ForkOutcome = await runWithRestarts({
    base: spec.base,
    // a remote host reads the transcript itself and reports the whole fork
    start: remote ? FRESH_START(spec.base) : spec.start,
    transcriptPath: ctx.transcriptPath,
    maxRestarts: remote ? 0 : deps.options.maxWorkerRestarts,
    aborted: () => ctx.abort.signal.aborted,
    run: (start, attempt) => (remote ? remote.run(ctx) : runForkInWorker(ctx, start, attempt)),
    onRestart: run.onRestart,
  });
  if (!tree) return { outcome };
  const closed = await closeWorktree(tree, `forkcache ${run.forkId}: ${run.directive.slice(0, 200)}`).catch(
    (err: unknown) => toWireError(err),
  );
  if ('code' in closed) return { outcome: { ...outcome, status: 'failed', error: closed } };
  return { outcome, worktree: closed };
}
