import { createWriteStream, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import { MessageChannel } from 'node:worker_threads';
import type Anthropic from '@anthropic-ai/sdk';
import type { LimitFunction } from 'p-limit';
import type { Piscina } from 'piscina';
import type { Clock } from '../clock.ts';
import { ForkcacheError, toWireError } from '../errors.ts';
import { FORK_QUERY_SOURCE } from '../fork/constants.ts';
import type { ForkChild } from '../fork/layouts.ts';
import type { UsageLedger } from '../ledger/ledger.ts';
import type { LedgerSummary } from '../ledger/summary.ts';
import { totalInputTokens } from '../ledger/usage.ts';
import type { ForkOutcome, LoopEvent } from '../loop/types.ts';
import type { FrozenPrefix } from '../prefix/freeze.ts';
import { EventQueue } from './event-queue.ts';
import type { FanOutEvent, ForkHandle, ForkResult } from './fork-handle.ts';
import { ForkState } from './fork-handle.ts';
import { DENY_UNASKED, type PermissionAnswer, type PermissionHandler } from '../tools/permissions.ts';
import { mergeOutcome, runWithRestarts, type StartPoint } from './fork-attempts.ts';
import { measureFreshBase, measureSharedTokens, sendPrewarm } from './measure.ts';
import { servePort } from './port-server.ts';
import type { ForkTask } from './protocol.ts';
import type { ResolvedEngineOptions } from './options.ts';
import { WarmGate } from './warm-gate.ts';

/** The JSON summary of a fan-out: the ledger's, plus the prefix and where the run lives. */
export interface FanOutSummary extends LedgerSummary {
  prefix: { id: string; sha256: string; bytes: number; approx_tokens: number; shared_tokens: number | null; drift_events: number; source: 'parent' | 'fallback' };
  warmups: number;
  run_dir: string | undefined;
}

export interface FanOutResult {
  fanoutId: string;
  forks: ForkResult[];
  summary: FanOutSummary;
}

/** A running fan-out. Iterate it (or `events`) for progress; `settled()` for the results. */
export interface FanOut extends AsyncIterable<FanOutEvent> {
  readonly id: string;
  readonly prefix: FrozenPrefix;
  readonly forks: readonly ForkHandle[];
  readonly events: AsyncIterable<FanOutEvent>;
  settled(): Promise<FanOutResult>;
  /** Cancel every fork that has not finished. */
  cancel(): void;
}

export interface FanOutDeps {
  options: ResolvedEngineOptions;
  pool: Piscina;
  /** Fork tasks in flight at most (threads × tasks per thread): the queue in front of the pool. */
  slots: LimitFunction;
  /** API requests in flight at most, shared by every fan-out of the engine. */
  api: LimitFunction;
  client: Anthropic;
  ledger: UsageLedger;
  clock: Clock;
  rootId: string;
  runDir: string | undefined;
  onPermission: PermissionHandler | undefined;
}

/** Orchestrates one fan-out on the main thread: measure, warm, dispatch, collect. */
export class FanOutRun implements FanOut {
  readonly id: string;
  readonly prefix: FrozenPrefix;
  readonly #deps: FanOutDeps;
  readonly #states: ForkState[];
  readonly #specs: readonly ForkSpec[];
  readonly #queue = new EventQueue<FanOutEvent>();
  readonly #gate: WarmGate;
  readonly #settled: Promise<FanOutResult>;
  #sharedTokens: number | undefined;
  #freshBase: number | undefined;
  readonly #log: WriteStream | undefined;
  /** Turns already in the ledger, per fork: recording is idempotent across restarts. */
  readonly #recorded = new Map<string, Set<number>>();

  constructor(id: string, prefix: FrozenPrefix, specs: readonly ForkSpec[], deps: FanOutDeps) {
    this.id = id;
    this.prefix = prefix;
    this.#deps = deps;
    this.#specs = specs;
    this.#states = specs.map((spec, i) => new ForkState(forkIdOf(id, i), i, spec.directive));
    this.#gate = new WarmGate({
      strategy: deps.options.warm,
      limit: deps.api,
      ttlMs: prefix.ttl === '1h' ? 3_600_000 : 300_000,
      clock: deps.clock,
    });
    this.#log = deps.runDir ? createWriteStream(join(deps.runDir, 'events.jsonl'), { flags: 'a' }) : undefined;
    this.#logLine({ type: 'fanout-start', at: deps.clock.now(), forks: this.#states.map((s) => ({ forkId: s.id, directive: s.directive })) });
    this.#settled = this.#run();
  }

  /** The run's event log (`events.jsonl`): what reports draw timelines from. */
  #logLine(record: Record<string, unknown>): void {
    this.#log?.write(`${JSON.stringify(record)}\n`);
  }

  get forks(): readonly ForkHandle[] {
    return this.#states.map((s) => s.view());
  }

  get events(): AsyncIterable<FanOutEvent> {
    return this.#queue;
  }

  [Symbol.asyncIterator](): AsyncIterator<FanOutEvent> {
    return this.#queue[Symbol.asyncIterator]();
  }

  settled(): Promise<FanOutResult> {
    return this.#settled;
  }

  cancel(): void {
    for (const state of this.#states) state.cancel();
  }

  async #run(): Promise<FanOutResult> {
    const { client, options } = this.#deps;
    this.#sharedTokens = await measureSharedTokens(client, this.prefix);
    this.#freshBase = await measureFreshBase(client, this.prefix.snapshot);
    if (options.warm === 'prewarm') await this.#prewarm();
    this.#recordEarlierTurns();
    const results = await Promise.all(this.#states.map((state) => this.#dispatch(state)));
    this.#queue.end();
    const summary = this.#summary(results);
    this.#logLine({ type: 'fanout-end', at: this.#deps.clock.now() });
    await new Promise<void>((resolve) => (this.#log ? this.#log.end(resolve) : resolve()));
    return { fanoutId: this.id, forks: results, summary };
  }

  async #prewarm(): Promise<void> {
    // Nothing to pre-warm without shared messages or without a boundary marker: first-child applies.
    if (this.prefix.headEnd === 'messages-open' || this.prefix.markers !== 'boundary') return;
    this.#gate.beginWarming();
    const at = this.#deps.clock.now();
    try {
      this.#logLine({ type: 'warmup-start', at });
      const message = await sendPrewarm(this.#deps.client, this.prefix, () => this.#gate.markWarm());
      this.#logLine({ type: 'warmup-end', at: this.#deps.clock.now(), usage: message.usage });
      this.#deps.ledger.record({ forkId: this.#deps.rootId, kind: 'warmup', turn: 0, model: this.prefix.snapshot.model, usage: message.usage, at, prefixId: this.prefix.id, ...this.#shared() });
    } catch {
      this.#gate.warmingFailed(); // the first child warms instead
    }
  }

  #shared(): { sharedPrefixTokens?: number } {
    return this.#sharedTokens === undefined ? {} : { sharedPrefixTokens: this.#sharedTokens };
  }

  #emit(event: FanOutEvent): void {
    this.#queue.push(event);
    if (!this.#log) return;
    if (event.type === 'fork-end') {
      const { result } = event;
      this.#logLine({ type: 'fork-end', forkId: event.forkId, at: event.at, status: event.status, turns: result.turns, toolCalls: result.toolCalls, filesChanged: result.filesChanged, error: result.error ?? null });
    } else this.#logLine(event);
  }

  /** A resumed fan-out: the turns done before are part of this tree's usage. */
  #recordEarlierTurns(): void {
    this.#specs.forEach((spec, i) => {
      for (const request of spec.start.previous.requests) this.#recordRequest(this.#states[i]!, request);
    });
  }

  #dispatch(state: ForkState): Promise<ForkResult> {
    const spec = this.#specs[state.index]!;
    if (spec.finished) return Promise.resolve(this.#finish(state, spec.finished));
    const abort = new AbortController();
    state.onCancel = () => abort.abort(new ForkcacheError('FORK_CANCELLED', 'fork cancelled'));
    if (state.cancelRequested) state.onCancel();
    return this.#deps.slots(async () => {
      let outcome: ForkOutcome;
      if (abort.signal.aborted) outcome = mergeOutcome(spec.start, emptyOutcome('cancelled', toWireError(abort.signal.reason)));
      else {
        state.status = 'running';
        this.#emit({ type: 'fork-start', forkId: state.id, at: this.#deps.clock.now() });
        outcome = await runWithRestarts({
          base: spec.base,
          start: spec.start,
          transcriptPath: this.#transcriptPath(state),
          maxRestarts: this.#deps.options.maxWorkerRestarts,
          aborted: () => abort.signal.aborted,
          run: (start, attempt) => this.#runInWorker(state, abort, start, attempt),
          onRestart: (attempt, start) => {
            // an event posted just before the worker died may be lost; the transcript is not
            for (const request of start.previous.requests) this.#recordRequest(state, request);
            this.#emitRestart(state, attempt, start);
          },
        });
      }
      return this.#finish(state, outcome);
    });
  }

  #emitRestart(state: ForkState, attempt: number, start: StartPoint): void {
    this.#emit({ type: 'fork-restart', forkId: state.id, at: this.#deps.clock.now(), attempt, turnsDone: start.turnsDone, interrupted: start.interrupted });
  }

  async #runInWorker(state: ForkState, abort: AbortController, start: StartPoint, attempt: number): Promise<ForkOutcome> {
    const { options, pool } = this.#deps;
    const { port1, port2 } = new MessageChannel();
    const server = servePort(port1, this.#gate, abort.signal, (event) => this.#onLoopEvent(state, event), (tool, input) => this.#ask(state, tool, input));
    const onAbort = (): void => port1.postMessage({ t: 'cancel' });
    abort.signal.addEventListener('abort', onAbort, { once: true });
    const task: ForkTask = {
      kind: 'fork',
      forkId: state.id,
      prefix: this.prefix.sab,
      child: start.child,
      port: port2,
      turnsDone: start.turnsDone,
      api: options.api,
      loop: { maxTurns: options.maxTurns, maxTokens: options.maxTokens, querySource: FORK_QUERY_SOURCE, marker: this.prefix.childMarker },
      tools: { workspace: options.workspace, allow: [...options.allow], limits: options.toolLimits },
      transcriptPath: this.#transcriptPath(state),
      permissions: options.permissions,
      testHooks: attempt === 0 && this.#deps.options.testHooks.exitWorker?.forkIndex === state.index ? { exitAfterTurn: this.#deps.options.testHooks.exitWorker.afterTurn } : {},
    };
    try {
      const outcome = (await pool.run(task, { transferList: [port2] })) as ForkOutcome;
      await server.ended; // the port's messages are ordered: every event is in before `end`
      return outcome;
    } catch (err) {
      if (abort.signal.aborted) return emptyOutcome('cancelled', toWireError(abort.signal.reason));
      return emptyOutcome('failed', new ForkcacheError('FORK_WORKER_FAILED', `worker failed: ${(err as Error).message}`, { cause: err }).toWire());
    } finally {
      abort.signal.removeEventListener('abort', onAbort);
      server.close();
    }
  }

  /** A fork's permission question: the embedder's handler decides; without one the answer is no. */
  async #ask(state: ForkState, tool: string, input: unknown): Promise<PermissionAnswer> {
    const handler = this.#deps.onPermission ?? DENY_UNASKED;
    const answer = await handler({ forkId: state.id, tool, input });
    const result = typeof answer === 'boolean' ? { allow: answer } : answer;
    this.#logLine({ type: 'permission', forkId: state.id, at: this.#deps.clock.now(), tool, allow: result.allow, reason: result.reason ?? null });
    return result;
  }

  #transcriptPath(state: ForkState): string | undefined {
    return this.#deps.runDir ? join(this.#deps.runDir, 'forks', `${state.id}.jsonl`) : undefined;
  }

  #onLoopEvent(state: ForkState, event: LoopEvent): void {
    if (event.type === 'turn-end') {
      state.turns = event.turn;
      this.#recordRequest(state, event.request);
    } else if (event.type === 'tool-call') state.lastTool = event.name;
    this.#emit({ forkId: state.id, ...event });
  }

  #recordRequest(state: ForkState, request: Extract<LoopEvent, { type: 'turn-end' }>['request']): void {
    const seen = this.#recorded.get(state.id) ?? new Set<number>();
    this.#recorded.set(state.id, seen);
    if (seen.has(request.turn)) return;
    seen.add(request.turn);
    const first = request.turn === 1;
    const fresh = first && this.#freshBase !== undefined && this.#sharedTokens !== undefined
      ? { freshInputTokens: this.#freshBase + Math.max(0, totalInputTokens(request.usage) - this.#sharedTokens) }
      : {};
    this.#deps.ledger.record({
      forkId: state.id,
      parentId: this.#deps.rootId,
      kind: 'fork',
      turn: request.turn - 1,
      model: this.prefix.snapshot.model,
      usage: request.usage,
      at: request.sentAt,
      prefixId: this.prefix.id,
      ...(first ? this.#shared() : {}),
      ...fresh,
    });
  }

  #finish(state: ForkState, outcome: ForkOutcome): ForkResult {
    const result: ForkResult = {
      ...outcome,
      forkId: state.id,
      index: state.index,
      directive: state.directive,
      sharing: this.prefix.snapshot.source,
      transcriptPath: this.#transcriptPath(state),
    };
    state.status = outcome.status;
    this.#deps.ledger.setStatus(state.id, outcome.status, { parentId: this.#deps.rootId, kind: 'fork' });
    this.#emit({ type: 'fork-end', forkId: state.id, at: this.#deps.clock.now(), status: outcome.status, result });
    state.resolve(result);
    return result;
  }

  #summary(results: ForkResult[]): FanOutSummary {
    return {
      ...this.#deps.ledger.summary(this.#deps.rootId),
      prefix: {
        id: this.prefix.id,
        sha256: this.prefix.sha256,
        bytes: this.prefix.byteLength,
        approx_tokens: this.prefix.approxTokens,
        shared_tokens: this.#sharedTokens ?? null,
        drift_events: results.filter((r) => r.error?.code === 'FORK_PREFIX_DRIFT').length,
        source: this.prefix.snapshot.source,
      },
      warmups: this.#gate.warmups,
      run_dir: this.#deps.runDir,
    };
  }
}

/** Fork ids are stable: the fan-out id and the fork's position (`fo001-ab12cd34-f03`). */
export function forkIdOf(fanoutId: string, index: number): string {
  return `${fanoutId}-f${String(index + 1).padStart(2, '0')}`;
}

/** One fork of a fan-out: its directive, its base continuation, where it starts. */
export interface ForkSpec {
  directive: string;
  base: ForkChild;
  start: StartPoint;
  /** Set when a resumed fork needs no more requests. */
  finished?: ForkOutcome | undefined;
}

function emptyOutcome(status: ForkOutcome['status'], error: ForkOutcome['error']): ForkOutcome {
  return { status, turns: 0, toolCalls: 0, requests: [], finalText: '', report: undefined, messages: [], filesChanged: [], error };
}
