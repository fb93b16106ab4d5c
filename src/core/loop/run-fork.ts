import { type Clock, systemClock } from '../util/clock.ts';
import type { ForkChild } from '../fork/layouts.ts';
import type { PerRequest } from '../prefix/body.ts';
import type { CacheTtl } from '../wire/cache.ts';
import type { HeadEnd } from '../prefix/sab.ts';
import type { ToolExecutor } from '../tools/executor.ts';
import { textOf } from './messages.ts';
import type { TurnRetryOptions } from './retry.ts';
import type { TranscriptSink } from './transcript-sink.ts';
import { failureEnding, type ForkEnding, outOfTurns, turnNext } from './endings.ts';
import { addPrompt, forkOutcome, type ForkState, type LoopSettings, startForkState } from './fork-state.ts';
import { judgeFinal } from './judge-final.ts';
import { runToolCalls } from './tool-calls.ts';
import { sendNextTurn } from './turn-request.ts';
import {
  type ForkOutcome,
  type LoopCheck,
  type LoopOutput,
  type LoopPrompt,
  type LoopEvent,
  OPEN_GATE,
  type RequestGate,
} from './types.ts';
import type { ModelTransport } from './transport.ts';

export const DEFAULT_MAX_TURNS = 200;
export const DEFAULT_MAX_TOKENS = 8192;

interface ForkLoopOptions {
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

/**
 * One fork's reasoning loop: request = frozen head + this child's suffix → model → tools →
 * repeat, until the model ends its turn, `maxTurns`, cancellation or an error. Tools run only
 * after a complete assistant turn, so a retried request never repeats a side effect.
 * Never throws: every ending is an outcome, and completed turns are in it.
 *
 * The story in steps: prepare (the settings and the fork's state, a resumed fork's prompt or
 * its last turn judged), then each turn: send it (`sendNextTurn`), read what it leads to
 * (`turnNext`), run its tool calls (`runToolCalls`) or judge it as a final answer
 * (`judgeFinal`), until an ending, which becomes the outcome (`forkOutcome`).
 */
export async function runForkLoop(options: ForkLoopOptions): Promise<ForkOutcome> {
  const loop = loopSettings(options);
  const state = startForkState(options.child.messages, options.prefix.head.byteLength, options.turnsDone);
  let ending: ForkEnding;
  try {
    ending = await runTurns(options, loop, state);
  } catch (err) {
    ending = failureEnding(err, options.signal, state.turn);
  }
  const outcome = forkOutcome(state, ending.status, ending.error);
  try {
    options.transcript?.end(outcome);
    return outcome;
  } catch (err) {
    // the end line could not be written (a full disk): the outcome says so, with its turns, and
    // the sink that just failed is not written again; resume finds the fork unfinished
    const failed = failureEnding(err, undefined, state.turn);
    return forkOutcome(state, failed.status, failed.error);
  }
}

/** The fork's turns, from a resumed fork's prompt to the ending one of them leads to. */
async function runTurns(options: ForkLoopOptions, loop: LoopSettings, state: ForkState): Promise<ForkEnding> {
  const resumed = await resumeFork(options, loop, state);
  if (resumed) return resumed;
  for (;;) {
    options.signal?.throwIfAborted();
    if (state.turn >= loop.maxTurns) return outOfTurns(loop.maxTurns);
    const message = await sendNextTurn(options, loop, state);
    const next = turnNext(message, state.turn);
    if (next.kind === 'end') return next;
    if (next.kind === 'tools') await runToolCalls(options, loop, state, message, next.uses);
    else if (next.kind === 'final') {
      const ended = await judgeFinal(options, loop, state, next.stopReason);
      if (ended) return ended;
    }
  }
}

/** The loop's options with their defaults. */
function loopSettings(options: ForkLoopOptions): LoopSettings {
  return {
    clock: options.clock ?? systemClock,
    gate: options.gate ?? OPEN_GATE,
    maxTurns: options.maxTurns ?? DEFAULT_MAX_TURNS,
    maxTokens: options.maxTokens ?? DEFAULT_MAX_TOKENS,
    emit: options.onEvent ?? (() => {}),
  };
}

/**
 * Before the first request of a resumed fork: the user turn `forkcache resume --retry` adds,
 * or the judgement of a last turn that was never judged. Its ending, when that judgement ends
 * the fork.
 */
async function resumeFork(
  options: ForkLoopOptions,
  loop: LoopSettings,
  state: ForkState,
): Promise<ForkEnding | undefined> {
  if (options.prompt) addPrompt(state, options.transcript, options.prompt);
  else if (options.judgeLast && state.own.at(-1)?.role === 'assistant') {
    state.finalText = textOf(state.own.at(-1));
    return judgeFinal(options, loop, state, options.judgeLast.stopReason);
  }
  return undefined;
}
