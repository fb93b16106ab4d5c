import Anthropic from '@anthropic-ai/sdk';
import { type Clock, systemClock } from '../util/clock.ts';
import { ForkcacheError, type WireError } from '../util/errors.ts';
import type { ForkChild } from '../fork/layouts.ts';
import { parseReport } from '../fork/report.ts';
import { normalizeUsage } from '../ledger/usage.ts';
import { childRequestBody, type PerRequest } from '../prefix/body.ts';
import type { CacheTtl } from '../wire/cache.ts';
import type { HeadEnd } from '../prefix/sab.ts';
import type { ToolExecutor } from '../tools/executor.ts';
import { targetPath, textOf, toAssistantParam, writtenPath } from './messages.ts';
import type { TurnRetryOptions } from './retry.ts';
import { describeFailure, sendWithRetries } from './send-turn.ts';
import type { TranscriptSink } from './transcript-sink.ts';
import { afterFinalTurn } from './final-turn.ts';
import { asUserMessage } from './prompts.ts';
import { type LoopToolResult, runTool } from './run-tool.ts';
import {
  type CheckRecord,
  type ForkOutcome,
  type LoopCheck,
  type LoopOutput,
  type LoopPrompt,
  type LoopEvent,
  OPEN_GATE,
  type RequestGate,
  type RequestRecord,
} from './types.ts';
import type { ModelTransport } from './transport.ts';

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
   * API's, `childRequestBody`). Chat Completions providers bring their own (src/providers).
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
  /**
   * Fork children end with a labelled report, and one without `Scope:` and `Result:` ends
   * `not_done` (default true). Fresh agents of a type have no such rule.
   */
  requireReport?: boolean | undefined;
  /** The plan's check: run after the fork reports done, its failures shown to the fork. */
  check?: LoopCheck | undefined;
  /** The fork is meant to change files: done with none changed ends it `no_change`. */
  judgeChange?: boolean | undefined;
  /** The fan-out's output schema: the report must hold a matching value (one repair turn, then `invalid_output`). */
  output?: LoopOutput | undefined;
  /** Resume: a user turn added before the first request (`forkcache resume --retry`). */
  prompt?: LoopPrompt | undefined;
  /**
   * Resume: the last turn in `child.messages` made no tool call and was never judged (the
   * process stopped first, or during its check): judge it before sending anything.
   */
  judgeLast?: { stopReason: string | null } | undefined;
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
  const maxTokens = options.maxTokens ?? DEFAULT_MAX_TOKENS;
  const emit = options.onEvent ?? (() => {});
  const own: Anthropic.MessageParam[] = [...options.child.messages];
  const requests: RequestRecord[] = [];
  const failedAttempts: RequestRecord[] = [];
  const filesChanged = new Set<string>();
  const notApplied = new Map<string, string>();
  const checks: CheckRecord[] = [];
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
      // every status but an error's or a cancel's ended with the fork's own final answer
      report: status === 'failed' || status === 'cancelled' || status === 'capped' ? undefined : parseReport(finalText),
      messages: own,
      filesChanged: [...filesChanged].sort(),
      editsNotApplied: [...notApplied].sort(([a], [b]) => (a < b ? -1 : 1)).map(([path, code]) => ({ path, code })),
      ...(checks.length > 0 ? { checks } : {}),
      ...(error ? { error } : {}),
    };
    options.transcript?.end(result);
    return result;
  };
  const addPrompt = (prompt: LoopPrompt): void => {
    own.push(asUserMessage(prompt));
    options.transcript?.prompt?.({ turn, ...prompt });
  };
  /** A turn without tool calls: the outcome, or undefined when the loop asked the fork for more. */
  const judgeFinal = async (stopReason: string | null): Promise<ForkOutcome | undefined> => {
    const step = await afterFinalTurn({
      turn,
      stopReason,
      finalText,
      own,
      requireReport: options.requireReport ?? true,
      turnsLeft: maxTurns - turn,
      check: options.check,
      output: options.output,
      judgeChange: options.judgeChange,
      clock,
      signal: options.signal,
      onCheck: (record) => {
        checks.push(record);
        options.transcript?.check?.(record);
        emit({ type: 'check-end', turn: record.turn, at: clock.now(), check: record });
      },
    });
    if (step.kind === 'end') return outcome(step.status, step.error);
    addPrompt(step.prompt);
    return undefined;
  };

  try {
    if (options.prompt) addPrompt(options.prompt);
    else if (options.judgeLast && own.at(-1)?.role === 'assistant') {
      finalText = textOf(own.at(-1));
      const ended = await judgeFinal(options.judgeLast.stopReason);
      if (ended) return ended;
    }
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
      const perRequest = { max_tokens: maxTokens, stream: true };
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
        maxTokens,
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
        const ended = await judgeFinal(message.stop_reason);
        if (ended) return ended;
        continue;
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
            : await runTool(options, use, [{ role: 'user', content: [...child.tailBlocks] }, ...own], turn);
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
    // a turn the main thread refused because the fork was cancelled, its own cancel still on the way
    if (options.signal?.aborted || (err as { code?: unknown }).code === 'FORK_CANCELLED') {
      return outcome('cancelled', new ForkcacheError('FORK_CANCELLED', 'fork cancelled', { data: { turn } }).toWire());
    }
    const failure = describeFailure(err);
    // the spend cap admitted no more of its turns: not a failure, the run goes on under a higher cap
    return outcome(failure.code === 'SPEND_CAP_MAX_USD' ? 'capped' : 'failed', failure);
  }
}
