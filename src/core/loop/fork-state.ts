import type Anthropic from '@anthropic-ai/sdk';
import type { Clock } from '../util/clock.ts';
import type { WireError } from '../util/errors.ts';
import { parseReport } from '../fork/report.ts';
import { asUserMessage } from './prompts.ts';
import type { TranscriptSink } from './transcript-sink.ts';
import type { CheckRecord, ForkOutcome, LoopEvent, LoopPrompt, RequestGate, RequestRecord } from './types.ts';

/** The loop's options with their defaults applied: what every step of one fork's loop reads. */
export interface LoopSettings {
  clock: Clock;
  gate: RequestGate;
  maxTurns: number;
  maxTokens: number;
  emit: (event: LoopEvent) => void;
}

/**
 * What one fork's loop has done so far, carried from step to step: its own conversation (after
 * the shared messages), its requests, its tool calls' effects, its checks. Everything a
 * `ForkOutcome` reports is read from here (`forkOutcome`).
 */
export interface ForkState {
  readonly own: Anthropic.MessageParam[];
  readonly requests: RequestRecord[];
  readonly failedAttempts: RequestRecord[];
  readonly filesChanged: Set<string>;
  /** The last failed write or edit of each file, by code, until a successful one (`editsNotApplied`). */
  readonly notApplied: Map<string, string>;
  readonly checks: CheckRecord[];
  turn: number;
  toolCalls: number;
  finalText: string;
  /** Bytes this fork has sent before: the frozen head at first, then its last request's body. */
  sentBytes: number;
}

/** A fork's state before its first request: its earlier turns (resume) and the head it starts from. */
export function startForkState(
  messages: readonly Anthropic.MessageParam[],
  headBytes: number,
  turnsDone: number | undefined,
): ForkState {
  return {
    own: [...messages],
    requests: [],
    failedAttempts: [],
    filesChanged: new Set<string>(),
    notApplied: new Map<string, string>(),
    checks: [],
    turn: turnsDone ?? 0,
    toolCalls: 0,
    finalText: '',
    sentBytes: headBytes,
  };
}

/** Add a user turn of the loop's own to the fork's conversation, and to its transcript. */
export function addPrompt(state: ForkState, transcript: TranscriptSink | undefined, prompt: LoopPrompt): void {
  state.own.push(asUserMessage(prompt));
  transcript?.prompt?.({ turn: state.turn, ...prompt });
}

/** What the fork produced, ending with `status`: plain data, read from its state. */
export function forkOutcome(state: ForkState, status: ForkOutcome['status'], error?: WireError): ForkOutcome {
  return {
    status,
    turns: state.turn,
    toolCalls: state.toolCalls,
    requests: state.requests,
    failedAttempts: state.failedAttempts,
    finalText: state.finalText,
    // every status but an error's or a cancel's ended with the fork's own final answer
    report:
      status === 'failed' || status === 'cancelled' || status === 'capped' ? undefined : parseReport(state.finalText),
    messages: state.own,
    filesChanged: [...state.filesChanged].sort(),
    editsNotApplied: [...state.notApplied].sort(([a], [b]) => (a < b ? -1 : 1)).map(([path, code]) => ({ path, code })),
    ...(state.checks.length > 0 ? { checks: state.checks } : {}),
    ...(error ? { error } : {}),
  };
}
