import type Anthropic from '@anthropic-ai/sdk';
import type { WireError } from '../util/errors.ts';
import type { ForkEndStatus } from '../util/fork-status.ts';
import type { ForkReport } from '../fork/report.ts';
import type { Usage } from '../ledger/usage.ts';
import type { RequestCost, RequestReport } from '../rate-limits/report.ts';
import type { SandboxReport } from '../tools/sandbox/report.ts';

/** A permit to send one request, from the scheduler (warm-first barrier, API concurrency, rate-limit admission). */
export interface GatePermit {
  /** The response has begun: the request's cache writes are readable now (`report`: its status and rate-limit headers). */
  started(report?: RequestReport): void;
  /** The request is over (success or failure; `report`: its usage, or the error's status, `retry-after` and code). Idempotent. */
  release(report?: RequestReport): void;
  /**
   * llama.cpp: the server slot this one request is pinned to (`id_slot`, written into the
   * request's suffix). A fork holds a slot for one request, never between its turns.
   */
  readonly slot?: number | undefined;
}

export interface RequestGate {
  /**
   * `first`: the fork's first request in this run (turn 1, or the first turn after a resume):
   * the request that reads the shared prefix, which the warm-first barrier holds.
   * `cost`: what the request is predicted to spend (the rate-limit admission reserves it).
   */
  acquire(request: {
    turn: number;
    first: boolean;
    signal?: AbortSignal | undefined;
    cost?: RequestCost | undefined;
  }): Promise<GatePermit>;
}

/** A gate that lets everything through at once (no scheduling). */
export const OPEN_GATE: RequestGate = {
  acquire: () => Promise.resolve({ started() {}, release() {} }),
};

export interface RequestRecord {
  turn: number;
  requestId: string | null;
  messageId: string;
  usage: Usage;
  stopReason: string | null;
  /** Clock times (ms): sent, response began, response complete. */
  sentAt: number;
  startedAt: number;
  endedAt: number;
}

/**
 * One run of the plan's check after the fork reported done: in the transcript (`check`
 * records), the outcome and the event log. `outputTail` is bounded and redacted.
 */
export interface CheckRecord {
  /** The turn whose report it checked. */
  turn: number;
  /** 1 for the first check of this attempt, then one more per retry. */
  attempt: number;
  command: string;
  exitCode: number | null;
  timedOut: boolean;
  durationMs: number;
  outputTail: string;
  passed: boolean;
  /**
   * What the checks so far created in the fork's worktree and the fork has not changed since
   * (workspace-relative, `dir/` for a directory): its commit leaves these out. Absent: none, or
   * not tracked (a shared workspace).
   */
  outputs?: string[] | undefined;
}

/** A fork's check, as the loop runs it (the worker builds `run` from its tool executor). */
export interface LoopCheck {
  /** The command after substitution (what runs, and what transcripts show). */
  command: string;
  /** Times the fork is given the failing output and asked to fix it (default 1). */
  retries: number;
  run(signal: AbortSignal | undefined): Promise<{
    exitCode: number | null;
    timedOut: boolean;
    output: string;
    outputs?: readonly string[] | undefined;
  }>;
}

/**
 * The fan-out's output schema, as the loop uses it: the worker asks the engine's thread, which
 * holds the embedder's schema (a Standard Schema is code: it cannot cross into a worker).
 */
export interface LoopOutput {
  /** Whether the fork's final text holds a value matching the schema; `errors`: why not, for the fork. */
  validate(finalText: string, signal: AbortSignal | undefined): Promise<OutputVerdict>;
}

export type OutputVerdict = { ok: true } | { ok: false; errors: string };

/** A user turn the loop adds to the fork's own conversation (see src/core/loop/prompts.ts). */
export interface LoopPrompt {
  reason: 'continue' | 'check' | 'retry' | 'fixup' | 'output';
  text: string;
}

export type LoopEvent =
  | { type: 'turn-start'; turn: number; at: number }
  | { type: 'response-start'; turn: number; at: number }
  | { type: 'turn-end'; turn: number; at: number; request: RequestRecord }
  /** The turn failed in a retryable way and is sent again (same bytes) after `waitMs`. */
  | { type: 'turn-retry'; turn: number; at: number; attempt: number; waitMs: number; error: WireError }
  /**
   * An attempt whose response began and then failed (a mid-stream error, a cancel): the
   * endpoint billed it, so the ledger records it with the usage of its `message_start`.
   */
  | { type: 'attempt-failed'; turn: number; at: number; request: RequestRecord }
  /** The plan's check ran after the fork reported done. */
  | { type: 'check-end'; turn: number; at: number; check: CheckRecord }
  | {
      type: 'tool-call';
      turn: number;
      at: number;
      name: string;
      id: string;
      isError: boolean;
      code?: string | undefined;
      path?: string | undefined;
    };

/** How a fork ended (see src/core/util/fork-status.ts: only `completed` is success). */

/** What one fork produced. Plain data: it crosses the worker boundary. */
export interface ForkOutcome {
  status: ForkEndStatus;
  /** Model calls made. */
  turns: number;
  toolCalls: number;
  requests: RequestRecord[];
  /** Text of the last assistant turn. */
  finalText: string;
  report: ForkReport | undefined;
  /** The child's own part of the conversation (after the shared messages), for resume and transcripts. */
  messages: Anthropic.MessageParam[];
  /** Files the fork wrote or edited successfully (workspace-relative). */
  filesChanged: string[];
  /**
   * Files whose last `edit_file`/`write_file` by this fork failed and was not followed by a
   * successful one (e.g. a conflict with a sibling): work the fork meant to do and did not.
   * Absent or empty: none. The run's summary names them, and the run does not exit 0.
   */
  /** Billed attempts that failed after their response began (see `attempt-failed`). */
  failedAttempts?: RequestRecord[] | undefined;
  /** Requests in flight when an earlier run died (resume): billed or not, unknown. */
  unknownOutcome?: number | undefined;
  /** The turn of each of those requests (sent again on resume: its twin prices the estimate). */
  unknownTurns?: number[] | undefined;
  editsNotApplied?: { path: string; code: string }[] | undefined;
  /** Every run of the plan's check, in order (none without a check). */
  checks?: CheckRecord[] | undefined;
  /** The distributed backend: the host that ran the fork, as it reported itself. */
  host?: ForkHostReport | undefined;
  error?: WireError | undefined;
}

/**
 * What a distributed host applied to one fork: its own probe of its sandbox (never the
 * submitter's), and the job's limits its ceilings clamped (`tools.limits.bashTmpMb: 60000 → 2048`).
 */
export interface ForkHostReport {
  id: string;
  /** Where the fork's bash and check ran on that host; undefined: the fork could run no command. */
  sandbox?: SandboxReport | undefined;
  clamped: string[];
}
