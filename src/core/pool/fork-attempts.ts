import { loadRunKey } from '../run-dir/run-key.ts';
import type Anthropic from '@anthropic-ai/sdk';
import type { ForkChild } from '../fork/layouts.ts';
import type { ForkTask } from './protocol.ts';
import { parseReport } from '../fork/report.ts';
import { writtenPath } from '../loop/messages.ts';
import type { CheckRecord, ForkOutcome, LoopPrompt, RequestRecord } from '../loop/types.ts';
import { isContinuedStatus, isForkEndStatus } from '../util/fork-status.ts';
import { type ReadOnlyOf, type RerunCall, resumeMessages } from './resume-messages.ts';
import { type ReadTranscript, readTranscript } from '../run-dir/transcript-reader.ts';

/** Where a fork starts from: nothing yet, or the turns its transcript holds. */
export interface StartPoint {
  child: ForkChild;
  turnsDone: number;
  /** What the earlier turns did (from the transcript): merged into the final outcome. */
  previous: {
    requests: RequestRecord[];
    failedAttempts: RequestRecord[];
    unknownOutcome: number;
    unknownTurns: number[];
    toolCalls: number;
    filesChanged: string[];
    checks: CheckRecord[];
  };
  /** Tool calls that were running when the earlier run stopped (reported to the model). */
  interrupted: string[];
  /**
   * The last turn made no tool call and was never judged (the process stopped before its end
   * record, or during its check): the loop judges it before sending anything.
   */
  judgeLast?: { stopReason: string | null } | undefined;
  /** A user turn to add before the first request (`resume --retry`). */
  prompt?: LoopPrompt | undefined;
  /** Read-only calls that were running then: the worker runs them again before the next turn. */
  rerun: RerunCall[];
}

/** The outcome of a fork that ran no turn (cancelled while queued, its worker failed at once…). */
export function emptyOutcome(status: ForkOutcome['status'], error: ForkOutcome['error']): ForkOutcome {
  return {
    status,
    turns: 0,
    toolCalls: 0,
    requests: [],
    finalText: '',
    report: undefined,
    messages: [],
    filesChanged: [],
    error,
  };
}

/** The worker task's fields that say where a fork starts (both dispatchers, local and remote). */
export function startFields(
  start: StartPoint,
): Pick<ForkTask, 'child' | 'turnsDone' | 'judgeLast' | 'prompt' | 'rerun'> {
  return {
    child: start.child,
    turnsDone: start.turnsDone,
    ...(start.judgeLast ? { judgeLast: start.judgeLast } : {}),
    ...(start.prompt ? { prompt: start.prompt } : {}),
    rerun: start.rerun,
  };
}

export const FRESH_START = (child: ForkChild): StartPoint => ({
  child,
  turnsDone: 0,
  previous: {
    requests: [],
    failedAttempts: [],
    unknownOutcome: 0,
    unknownTurns: [],
    toolCalls: 0,
    filesChanged: [],
    checks: [],
  },
  interrupted: [],
  rerun: [],
});

/** The start point a transcript gives: the base child continued by the fork's own turns. */
export function startFromTranscript(base: ForkChild, transcript: ReadTranscript, readOnly?: ReadOnlyOf): StartPoint {
  const { messages, turnsDone, interrupted, rerun } = resumeMessages(transcript, readOnly);
  const files = new Set<string>();
  let toolCalls = 0;
  for (const turn of transcript.turns) {
    const uses = (Array.isArray(turn.assistant.content) ? turn.assistant.content : []).filter(
      (b): b is Anthropic.ToolUseBlockParam => b.type === 'tool_use',
    );
    for (const tool of turn.tools) {
      if (!tool.result) continue;
      toolCalls += 1;
      const use = uses.find((u) => u.id === tool.id);
      const path = use ? writtenPath(use as Anthropic.ToolUseBlock, tool.result.isError) : undefined;
      if (path) files.add(path);
    }
  }
  const last = transcript.turns.at(-1);
  const unjudged = last !== undefined && !hasToolUse(last.assistant) && last.prompt === undefined;
  return {
    child: { tailBlocks: base.tailBlocks, messages: [...base.messages, ...messages] },
    turnsDone,
    previous: {
      requests: transcript.turns.map((t) => t.request),
      failedAttempts: transcript.failedAttempts,
      unknownOutcome: transcript.unknownOutcome,
      unknownTurns: transcript.unknownTurns,
      toolCalls,
      filesChanged: [...files],
      checks: transcript.checks,
    },
    interrupted,
    ...(unjudged ? { judgeLast: { stopReason: last.request.stopReason } } : {}),
    rerun,
  };
}

const hasToolUse = (message: Anthropic.MessageParam): boolean =>
  Array.isArray(message.content) && message.content.some((b) => b.type === 'tool_use');

/**
 * A transcript whose fork is finished: it ended with its own answer (`completed`, or a status
 * that is not done: `not_done`, `truncated`, `check_failed`), and nothing came after that end.
 * A failed or cancelled fork, or one stopped before its end record, is continued instead (its
 * last answer, if any, is judged again: `judgeLast`) — except a fork that failed because the
 * API refused its request as too large: its conversation is that request, and resuming would
 * send it into the same refusal, so it stays failed (FORK_REQUEST_TOO_LARGE) and says why.
 */
export function finishedOutcome(
  start: StartPoint,
  transcript: ReadTranscript,
  /** `continued`: a failed, capped or cancelled fork counts as finished too (a fix-up pass). */
  options: { continued?: boolean } = {},
): ForkOutcome | undefined {
  const end = transcript.end;
  if (!end || !isForkEndStatus(end.status)) return undefined;
  const tooLarge = end.status === 'failed' && refusedAsTooLarge(end.error);
  if (isContinuedStatus(end.status) && !tooLarge && options.continued !== true) return undefined;
  const error = tooLarge
    ? {
        code: 'FORK_REQUEST_TOO_LARGE',
        message: `not resumed: the API refused this fork's request as too large (${end.error!.message}), and its conversation is that request; run the directive again as a new fork, narrower`,
      }
    : end.error && { code: end.error.code, message: end.error.message };
  return {
    status: end.status,
    turns: start.turnsDone,
    toolCalls: start.previous.toolCalls,
    requests: start.previous.requests,
    failedAttempts: start.previous.failedAttempts,
    unknownOutcome: start.previous.unknownOutcome,
    unknownTurns: start.previous.unknownTurns,
    finalText: end.finalText,
    report: parseReport(end.finalText),
    messages: [...start.child.messages],
    filesChanged: [...start.previous.filesChanged].sort(),
    ...(start.previous.checks.length > 0 ? { checks: start.previous.checks } : {}),
    ...(error ? { error } : {}),
  };
}

/** The API's 413 (`request_too_large`), as the loop recorded it (describeFailure) or a code of ours. */
function refusedAsTooLarge(error: { code: string; data?: unknown } | undefined): boolean {
  if (error === undefined) return false;
  if (error.code === 'FORK_REQUEST_TOO_LARGE') return true;
  const data = (error.data ?? {}) as { status?: unknown; type?: unknown };
  return data.status === 413 || data.type === 'request_too_large';
}

/** An attempt's outcome completed with what earlier attempts (or runs) did. */
export function mergeOutcome(start: StartPoint, outcome: ForkOutcome): ForkOutcome {
  return {
    ...outcome,
    toolCalls: start.previous.toolCalls + outcome.toolCalls,
    requests: [...start.previous.requests, ...outcome.requests],
    failedAttempts: [...start.previous.failedAttempts, ...(outcome.failedAttempts ?? [])],
    unknownOutcome: start.previous.unknownOutcome + (outcome.unknownOutcome ?? 0),
    unknownTurns: [...start.previous.unknownTurns, ...(outcome.unknownTurns ?? [])],
    filesChanged: [...new Set([...start.previous.filesChanged, ...outcome.filesChanged])].sort(),
    ...(start.previous.checks.length + (outcome.checks?.length ?? 0) > 0
      ? { checks: [...start.previous.checks, ...(outcome.checks ?? [])] }
      : {}),
  };
}

interface AttemptOptions {
  base: ForkChild;
  start: StartPoint;
  transcriptPath: string | undefined;
  /** Restarts after a worker died (default 2). */
  maxRestarts: number;
  aborted: () => boolean;
  /** Host tools that only read (an interrupted call of one runs again on the fresh worker). */
  readOnly?: ReadOnlyOf | undefined;
  run(start: StartPoint, attempt: number): Promise<ForkOutcome>;
  onRestart(attempt: number, start: StartPoint): void;
}

/**
 * Run a fork, and when its worker dies mid-run, continue it on a fresh worker from its
 * transcript: its completed turns are kept, never re-sent, and an interrupted tool call is
 * reported to the model instead of being repeated.
 */
export async function runWithRestarts(options: AttemptOptions): Promise<ForkOutcome> {
  let start = options.start;
  for (let attempt = 0; ; attempt++) {
    const outcome = await options.run(start, attempt);
    const workerDied = outcome.status === 'failed' && outcome.error?.code === 'FORK_WORKER_FAILED';
    if (!workerDied || options.aborted() || !options.transcriptPath || attempt >= options.maxRestarts)
      return mergeOutcome(start, outcome);
    // signed by this process's workers: anything else was changed meanwhile (run-trust.ts)
    const transcript = readTranscript(options.transcriptPath, 'INVALID_RUN_DIR', loadRunKey());
    const retry = start.prompt;
    start = startFromTranscript(options.base, transcript, options.readOnly);
    const finished = finishedOutcome(start, transcript);
    // a retry whose worker died before its prompt was written is still a retry
    if (finished && !retry) return finished;
    if (finished) start = { ...start, prompt: retry };
    options.onRestart(attempt + 1, start);
  }
}
