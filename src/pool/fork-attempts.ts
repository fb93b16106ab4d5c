import { loadRunKey } from '../run-dir/run-key.ts';
import type Anthropic from '@anthropic-ai/sdk';
import type { ForkChild } from '../fork/layouts.ts';
import { parseReport } from '../fork/report.ts';
import { textOf, writtenPath } from '../loop/messages.ts';
import type { ForkOutcome, RequestRecord } from '../loop/types.ts';
import { type ReadTranscript, readTranscript, type RerunCall, resumeMessages } from './resume-messages.ts';

/** Where a fork starts from: nothing yet, or the turns its transcript holds. */
export interface StartPoint {
  child: ForkChild;
  turnsDone: number;
  /** What the earlier turns did (from the transcript): merged into the final outcome. */
  previous: {
    requests: RequestRecord[];
    failedAttempts: RequestRecord[];
    unknownOutcome: number;
    toolCalls: number;
    filesChanged: string[];
  };
  /** Tool calls that were running when the earlier run stopped (reported to the model). */
  interrupted: string[];
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

export const FRESH_START = (child: ForkChild): StartPoint => ({
  child,
  turnsDone: 0,
  previous: { requests: [], failedAttempts: [], unknownOutcome: 0, toolCalls: 0, filesChanged: [] },
  interrupted: [],
  rerun: [],
});

/** The start point a transcript gives: the base child continued by the fork's own turns. */
export function startFromTranscript(base: ForkChild, transcript: ReadTranscript): StartPoint {
  const { messages, turnsDone, interrupted, rerun } = resumeMessages(transcript);
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
  return {
    child: { tailBlocks: base.tailBlocks, messages: [...base.messages, ...messages] },
    turnsDone,
    previous: {
      requests: transcript.turns.map((t) => t.request),
      failedAttempts: transcript.failedAttempts,
      unknownOutcome: transcript.unknownOutcome,
      toolCalls,
      filesChanged: [...files],
    },
    interrupted,
    rerun,
  };
}

/**
 * A transcript whose fork needs no more requests: it ended `completed`, or its last turn was
 * the model's final answer (the process stopped before the `end` record was written).
 */
export function finishedOutcome(start: StartPoint, transcript: ReadTranscript): ForkOutcome | undefined {
  const last = transcript.turns.at(-1);
  const finalTurn =
    last && !(Array.isArray(last.assistant.content) && last.assistant.content.some((b) => b.type === 'tool_use'));
  if (transcript.end?.status !== 'completed' && !finalTurn) return undefined;
  const finalText = transcript.end?.finalText ?? textOf(last?.assistant);
  return {
    status: 'completed',
    turns: start.turnsDone,
    toolCalls: start.previous.toolCalls,
    requests: start.previous.requests,
    failedAttempts: start.previous.failedAttempts,
    unknownOutcome: start.previous.unknownOutcome,
    finalText,
    report: parseReport(finalText),
    messages: [...start.child.messages],
    filesChanged: [...start.previous.filesChanged].sort(),
  };
}

/** An attempt's outcome completed with what earlier attempts (or runs) did. */
export function mergeOutcome(start: StartPoint, outcome: ForkOutcome): ForkOutcome {
  return {
    ...outcome,
    toolCalls: start.previous.toolCalls + outcome.toolCalls,
    requests: [...start.previous.requests, ...outcome.requests],
    failedAttempts: [...start.previous.failedAttempts, ...(outcome.failedAttempts ?? [])],
    unknownOutcome: start.previous.unknownOutcome + (outcome.unknownOutcome ?? 0),
    filesChanged: [...new Set([...start.previous.filesChanged, ...outcome.filesChanged])].sort(),
  };
}

export interface AttemptOptions {
  base: ForkChild;
  start: StartPoint;
  transcriptPath: string | undefined;
  /** Restarts after a worker died (default 2). */
  maxRestarts: number;
  aborted: () => boolean;
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
    const transcript = readTranscript(options.transcriptPath, 'INVALID_ARGUMENT', loadRunKey());
    start = startFromTranscript(options.base, transcript);
    const finished = finishedOutcome(start, transcript);
    if (finished) return finished;
    options.onRestart(attempt + 1, start);
  }
}
