import type Anthropic from '@anthropic-ai/sdk';
import type { CheckRecord, ForkOutcome, LoopPrompt, RequestRecord } from './types.ts';

/**
 * Where the loop records a fork's progress as it happens: after every turn, and before and
 * after each tool call, so that an interrupted tool call is known on resume.
 */
export interface TranscriptSink {
  /**
   * Written ahead of every request: one that has neither a `turn` nor an `attempt` record
   * after it was in flight when the process died (billed or not: unknown outcome).
   */
  requestStart?(record: { turn: number; attempt: number }): void;
  /** A failed attempt: `request` (its usage) when its response had begun, so it was billed. */
  attemptFailed?(record: { turn: number; attempt: number; request: RequestRecord | undefined }): void;
  turn(record: { turn: number; assistant: Anthropic.MessageParam; request: RequestRecord }): void;
  toolStart(record: { turn: number; id: string; name: string; input: unknown }): void;
  toolEnd(record: { turn: number; id: string; isError: boolean; content: string }): void;
  /** A user turn the loop added after turn `turn` (a continuation, a check's output, a retry). */
  prompt?(record: { turn: number } & LoopPrompt): void;
  /** The plan's check ran (before the prompt with its output, when it failed). */
  check?(record: CheckRecord): void;
  end(outcome: ForkOutcome): void;
}
