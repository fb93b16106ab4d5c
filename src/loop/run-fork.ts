import Anthropic from '@anthropic-ai/sdk';
import { type Clock, systemClock } from '../clock.ts';
import { ForkcacheError, toWireError, type WireError } from '../errors.ts';
import { FORK_QUERY_SOURCE, SPAWN_TOOL_NAME } from '../wire/fork-text.ts';
import { assertMaySpawn } from '../fork/guard.ts';
import type { ForkChild } from '../fork/layouts.ts';
import { parseReport } from '../fork/report.ts';
import { normalizeUsage } from '../ledger/usage.ts';
import { childRequestBody, type PerRequest } from '../prefix/body.ts';
import type { CacheTtl } from '../wire/cache.ts';
import type { HeadEnd } from '../prefix/sab.ts';
import { startedMessageOf } from '../provider/send.ts';
import type { ToolExecutor } from '../tools/executor.ts';
import { targetPath, textOf, toAssistantParam, writtenPath } from './messages.ts';
import { backoffMs, DEFAULT_TURN_RETRY, isRetryableTurnError, type TurnRetryOptions } from './retry.ts';
import type { TranscriptSink } from './transcript-sink.ts';
import { reportOfError } from '../provider/rate-limit-report.ts';
import { apiErrorType, isApiError } from '../provider/api-error.ts';
import type { RequestReport } from '../rate-limits/report.ts';
import { isRateLimitOrOverload, MAX_GATE_RETRIES } from './rate-limited.ts';
import {
  type ForkOutcome,
  type LoopEvent,
  type ModelTransport,
  OPEN_GATE,
  type RequestGate,
  type RequestRecord,
} from './types.ts';

export const DEFAULT_MAX_TURNS = 200;
export const DEFAULT_MAX_TOKENS = 8192;

export interface ForkLoopOptions {
  /** The frozen head (attached in a worker, or the FrozenPrefix itself in-thread). */
  prefix: { readonly head: Uint8Array; readonly headEnd: HeadEnd };
  /** This child's continuation: its directive, and on resume its earlier turns. */
  child: ForkChild;
  transport: ModelTransport;
  /**
   * The provider's request layout: head bytes + this child's suffix (default: the Messages
   * API's, `childRequestBody`). Chat Completions providers bring their own (src/provider).
   */
  body?: ((child: ForkChild, perRequest: PerRequest, marker: CacheTtl | false) => Uint8Array) | undefined;
  tools: ToolExecutor;
  gate?: RequestGate | undefined;
  maxTurns?: number | undefined;
  maxTokens?: number | undefined;
  /** Carried with the task, never in the prompt: the fast path of the recursion guard. */
  querySource?: string | undefined;
  signal?: AbortSignal | undefined;
  clock?: Clock | undefined;
  onEvent?: ((event: LoopEvent) => void) | undefined;
  transcript?: TranscriptSink | undefined;
  /** Turns already done (resume): numbering continues from here. */
  turnsDone?: number | undefined;
  /** The moving marker on the child's last block (default `5m`; `false`: none). */
  marker?: CacheTtl | false | undefined;
  /** Retries of a whole turn after a mid-stream failure (default: 3, 0.5 s doubling to 8 s). */
  retry?: TurnRetryOptions | undefined;
  /**
   * The gate owns the waits after a 429 or 529 (rate-limit admission: one backoff for the
   * whole fan-out): those retries are neither counted against `retry` nor backed off here.
   */
  gateRetries?: boolean | undefined;
  /** Asked before each tool call runs (the permission policy); default: everything allowed. */
  permit?:
    | ((call: { id: string; name: string; input: unknown }) => Promise<{ allow: boolean; reason?: string | undefined }>)
    | undefined;
}

type Block = Anthropic.ContentBlockParam;

/**
 * One fork's reasoning loop: request = frozen head + this child's suffix → model → tools →
 * repeat, until the model ends its turn, `maxTurns`, cancellation or an error. Tools run only
 * after a complete assistant turn, so a retried request never repeats a side effect.
 * Never throws: every ending is an outcome, and completed turns are in it.
 */
export async function runForkLoop(options: ForkLoopOptions): Promise<ForkOutcome> {
  const clock = options.clock ?? systemClock;
  const gate = options.gate ?? OPEN_GATE;
  const maxTurns = options.maxTurns ?? DEFAULT_MAX_TURNS;
  const emit = options.onEvent ?? (() => {});
  const own: Anthropic.MessageParam[] = [...options.child.messages];
  const requests: RequestRecord[] = [];
  const failedAttempts: RequestRecord[] = [];
  const filesChanged = new Set<string>();
  const notApplied = new Map<string, string>();
  let turn = options.turnsDone ?? 0;
  let toolCalls = 0;
  let finalText = '';
  // bytes this fork has sent before: the frozen head at first, then its last request's body
  let sentBytes = options.prefix.head.byteLength;

  const outcome = (status: ForkOutcome['status'], error?: WireError): ForkOutcome => {
    const result: ForkOutcome = {
      status,
      turns: turn,
      toolCalls,
      requests,
      failedAttempts,
      finalText,
      report: status === 'completed' ? parseReport(finalText) : undefined,
      messages: own,
      filesChanged: [...filesChanged].sort(),
      editsNotApplied: [...notApplied].sort(([a], [b]) => (a < b ? -1 : 1)).map(([path, code]) => ({ path, code })),
      ...(error ? { error } : {}),
    };
    options.transcript?.end(result);
    return result;
  };

  try {
    for (;;) {
      options.signal?.throwIfAborted();
      if (turn >= maxTurns) {
        return outcome(
          'failed',
          new ForkcacheError('FORK_MAX_TURNS', `fork stopped after ${maxTurns} turns without finishing`, {
            data: { maxTurns },
          }).toWire(),
        );
      }
      turn += 1;
      const child: ForkChild = { tailBlocks: options.child.tailBlocks, messages: own };
      const perRequest = { max_tokens: options.maxTokens ?? DEFAULT_MAX_TOKENS, stream: true };
      const marker = options.marker ?? '5m';
      const body = options.body
        ? options.body(child, perRequest, marker)
        : childRequestBody(options.prefix, child, perRequest, { marker });
      emit({ type: 'turn-start', turn, at: clock.now() });
      const { message, requestId, sentAt, startedAt } = await sendWithRetries({
        options,
        gate,
        clock,
        body,
        turn,
        emit,
        failedAttempts,
        sentBytes,
      });
      sentBytes = body.byteLength;
      const record: RequestRecord = {
        turn,
        requestId,
        messageId: message.id,
        usage: normalizeUsage(message.usage),
        stopReason: message.stop_reason,
        sentAt,
        startedAt,
        endedAt: clock.now(),
      };
      requests.push(record);
      const assistant = toAssistantParam(message);
      own.push(assistant);
      options.transcript?.turn({ turn, assistant, request: record });
      emit({ type: 'turn-end', turn, at: record.endedAt, request: record });
      finalText = textOf(message);

      if (message.stop_reason === 'refusal') {
        return outcome(
          'failed',
          new ForkcacheError('FORK_MODEL_REFUSED', 'the model refused the directive', { data: { turn } }).toWire(),
        );
      }
      const uses = message.content.filter((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use');
      if (uses.length === 0) {
        if (message.stop_reason === 'pause_turn') continue;
        return outcome('completed');
      }
      const results: Block[] = [];
      for (const use of uses) {
        options.signal?.throwIfAborted();
        options.transcript?.toolStart({ turn, id: use.id, name: use.name, input: use.input });
        const result: LoopToolResult =
          message.stop_reason === 'max_tokens' && use === uses.at(-1)
            ? {
                isError: true,
                code: 'TOOL_INPUT_INVALID',
                content: 'This tool call was cut off by max_tokens; send it again, shorter.',
              }
            : await runTool(options, use, [{ role: 'user', content: [...child.tailBlocks] }, ...own]);
        toolCalls += 1;
        const path = writtenPath(use, result.isError);
        if (path) filesChanged.add(path);
        const target = targetPath(use);
        if (target !== undefined) {
          if (result.isError) notApplied.set(target, result.code);
          else notApplied.delete(target);
        }
        options.transcript?.toolEnd({ turn, id: use.id, isError: result.isError, content: result.content });
        emit({
          type: 'tool-call',
          turn,
          at: clock.now(),
          name: use.name,
          id: use.id,
          isError: result.isError,
          code: result.isError ? result.code : undefined,
          path,
        });
        results.push({
          type: 'tool_result',
          tool_use_id: use.id,
          content: result.content,
          ...(result.isError ? { is_error: true } : {}),
        });
      }
      own.push({ role: 'user', content: results });
    }
  } catch (err) {
    if (options.signal?.aborted) {
      return outcome('cancelled', new ForkcacheError('FORK_CANCELLED', 'fork cancelled', { data: { turn } }).toWire());
    }
    return outcome('failed', describeFailure(err));
  }
}

/** What sending one turn needs. */
interface TurnSend {
  options: ForkLoopOptions;
  gate: RequestGate;
  clock: Clock;
  body: Uint8Array;
  turn: number;
  emit: (event: LoopEvent) => void;
  failedAttempts: RequestRecord[];
  sentBytes: number;
}

/** Send a turn; when it fails in a retryable way, send the same bytes again after a backoff. */
async function sendWithRetries(send: TurnSend): ReturnType<typeof sendThroughGate> {
  const { options, clock, turn, emit } = send;
  const retry = options.retry ?? DEFAULT_TURN_RETRY;
  let limited = 0;
  // `tries` numbers every attempt (transcript, ledger); `attempt` counts the backoff retries, `limited`
  // the 429/529s the gate owns under admission.
  for (let attempt = 0, tries = 0; ; tries++) {
    const sentAt = clock.now();
    try {
      return await sendThroughGate(send, tries);
    } catch (err) {
      recordFailedAttempt(send, tries, sentAt, err);
      if (options.signal?.aborted || !isRetryableTurnError(err)) throw err;
      // a 429/529 under admission: the gate holds the next attempt for as long as the API asked
      const owned = options.gateRetries === true && isRateLimitOrOverload(err);
      if (owned ? ++limited > MAX_GATE_RETRIES : attempt >= retry.retries) throw err;
      const wait = owned ? 0 : backoffMs(retry, attempt);
      if (!owned) attempt++;
      emit({
        type: 'turn-retry',
        turn,
        at: clock.now(),
        attempt: attempt + limited,
        waitMs: wait,
        error: describeFailure(err),
      });
      await clock.sleep(wait, options.signal);
    }
  }
}

/** A failed attempt whose response had begun was billed: keep it for the ledger (issue 15, case 6). */
function recordFailedAttempt(
  { options, clock, turn, emit, failedAttempts }: TurnSend,
  attempt: number,
  sentAt: number,
  err: unknown,
): void {
  const started = startedMessageOf(err);
  if (!started) {
    options.transcript?.attemptFailed?.({ turn, attempt, request: undefined });
    return;
  }
  const at = clock.now();
  const request: RequestRecord = {
    turn,
    requestId: null,
    messageId: started.id,
    usage: normalizeUsage(started.usage),
    stopReason: null,
    sentAt,
    startedAt: sentAt,
    endedAt: at,
  };
  failedAttempts.push(request);
  options.transcript?.attemptFailed?.({ turn, attempt, request });
  emit({ type: 'attempt-failed', turn, at, request });
}

async function sendThroughGate(
  { options, gate, clock, body, turn, emit, sentBytes }: TurnSend,
  attempt: number,
): Promise<{ message: Anthropic.Message; requestId: string | null; sentAt: number; startedAt: number }> {
  const maxTokens = options.maxTokens ?? DEFAULT_MAX_TOKENS;
  const cost = { bytes: body.byteLength, freshBytes: Math.max(0, body.byteLength - sentBytes), maxTokens };
  const permit = await gate.acquire({
    turn,
    first: turn === (options.turnsDone ?? 0) + 1,
    signal: options.signal,
    cost,
  });
  // written ahead once the request is really about to leave (not while it queues for a permit)
  options.transcript?.requestStart?.({ turn, attempt });
  const sentAt = clock.now();
  let startedAt = sentAt;
  let report: RequestReport = { status: null };
  try {
    const sent = await options.transport.send(body, {
      signal: options.signal,
      onStart: (_message, rateLimits) => {
        startedAt = clock.now();
        permit.started({ status: 200, rateLimits });
        emit({ type: 'response-start', turn, at: startedAt });
      },
    });
    report = { status: 200, rateLimits: sent.rateLimits, usage: normalizeUsage(sent.message.usage) };
    return { ...sent, sentAt, startedAt };
  } catch (err) {
    report = reportOfError(err);
    throw err;
  } finally {
    permit.release(report);
  }
}

type LoopToolResult = { isError: false; content: string } | { isError: true; code: string; content: string };

/**
 * Run one tool call. The spawn tool is refused inside a fork by the recursion guard, both
 * layers: the task's query source, and the boilerplate tag in the child's own messages.
 */
async function runTool(
  options: ForkLoopOptions,
  use: Anthropic.ToolUseBlock,
  history: Anthropic.MessageParam[],
): Promise<LoopToolResult> {
  if (use.name === SPAWN_TOOL_NAME) {
    try {
      assertMaySpawn({ querySource: options.querySource ?? FORK_QUERY_SOURCE, messages: history });
    } catch (err) {
      return { isError: true, code: 'FORK_RECURSION', content: (err as Error).message };
    }
  }
  if (options.permit && options.tools.isAllowed(use.name)) {
    const answer = await options.permit({ id: use.id, name: use.name, input: use.input });
    if (!answer.allow)
      return {
        isError: true,
        code: 'PERMISSION_DENIED',
        content: `Permission denied for ${use.name}${answer.reason ? `: ${answer.reason}` : ''}. Do without it, or report that it is needed.`,
      };
  }
  return options.tools.execute(use.name, use.input, { signal: options.signal });
}

/** An error as the outcome reports it: the forkcache code when there is one, the API status otherwise. */
export function describeFailure(err: unknown): WireError {
  let current: unknown = err;
  for (let depth = 0; depth < 4 && current; depth++) {
    if (current instanceof ForkcacheError) return current.toWire();
    current = (current as { cause?: unknown }).cause;
  }
  if (isApiError(err)) {
    return {
      code: 'FORK_API_ERROR',
      message: err.message,
      data: { status: err.status ?? null, type: apiErrorType(err) ?? null, requestId: err.requestID ?? null },
    };
  }
  return toWireError(err);
}
