import type Anthropic from '@anthropic-ai/sdk';
import type { ForkOutcome, RequestRecord } from './types.ts';

/**
 * Where the loop records a fork's progress as it happens: after every turn, and before and
 * after each tool call, so that an interrupted tool call is known on resume.
 */
export interface TranscriptSink {
  turn(record: { turn: number; assistant: Anthropic.MessageParam; request: RequestRecord }): void;
  toolStart(record: { turn: number; id: string; name: string; input: unknown }): void;
  toolEnd(record: { turn: number; id: string; isError: boolean; content: string }): void;
  end(outcome: ForkOutcome): void;
}
