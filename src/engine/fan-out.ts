import type { WriteStream } from 'node:fs';
import { join } from 'node:path';
import { ForkcacheError, toWireError } from '../errors.ts';
import type { ForkOutcome, LoopEvent } from '../loop/types.ts';
import type { FrozenPrefix } from '../prefix/freeze.ts';
import { transcriptPath } from '../run-dir/files.ts';
import { openEventLog } from '../run-dir/writers.ts';
import { DENY_UNASKED, type PermissionAnswer } from '../tools/permissions.ts';
import { EventQueue } from './event-queue.ts';
import { FanOutAccounts } from './fan-out-accounts.ts';
import {
  type FanOut,
  type FanOutDeps,
  type FanOutResult,
  type FanOutSummary,
  type ForkSpec,
  forkIdOf,
} from './fan-out-types.ts';
import { emptyOutcome, FRESH_START, mergeOutcome, runWithRestarts, type StartPoint } from '../pool/fork-attempts.ts';
import { runForkInWorker } from '../pool/fork-dispatch.ts';
import type { FanOutEvent, ForkHandle, ForkResult } from '../agent/fork-handle.ts';
import { ForkState } from '../agent/fork-handle.ts';
import { measureFreshBase, measureSharedTokens, sendPrewarm } from './measure.ts';
import { WarmGate } from './warm-gate.ts';
import { readabilityOf } from '../wire/providers.ts';
import { warmUpChatFanOut } from './chat-warmup.ts';
import { FanOutGate } from '../gate/admission/fan-out-gate.ts';
import { sampleBudget } from '../gate/admission/budget-log.ts';
import { closeWorktree, openWorktree, type Worktree, type WorktreeResult } from '../tools/worktree.ts';

export type { FanOut, FanOutDeps, FanOutResult, FanOutSummary, ForkSpec } from './fan-out-types.ts';
export { forkIdOf } from './fan-out-types.ts';

/** Orchestrates one fan-out on the main thread: measure, warm, dispatch, collect. */
export class FanOutRun implements FanOut {
  readonly id: string;
  readonly prefix: FrozenPrefix;
  readonly #deps: FanOutDeps;
  readonly #states: ForkState[];
  readonly #specs: readonly ForkSpec[];
  readonly #queue = new EventQueue<FanOutEvent>();
  readonly #gate: WarmGate;
  /** The warm gate behind the engine's rate-limit admission: what each fork's requests ask. */
  readonly #admission: FanOutGate;
  readonly #settled: Promise<FanOutResult>;
  readonly #accounts: FanOutAccounts;
  readonly #log: WriteStream | undefined;
  readonly #turnStartedAt = new Map<string, number>();
  /** Aborted by `cancel()`: stops what runs before the forks (token counts, the pre-warm). */
  readonly #abort = new AbortController();

  constructor(id: string, prefix: FrozenPrefix, specs: readonly ForkSpec[], deps: FanOutDeps) {
    this.id = id;
    this.prefix = prefix;
    this.#deps = deps;
    this.#specs = specs;
    this.#accounts = new FanOutAccounts(deps, prefix);
    this.#states = specs.map((spec, i) => new ForkState(forkIdOf(id, i), i, spec.directive));
    if (deps.foreground) for (const state of this.#states) state.mode = 'foreground';
    this.#gate = new WarmGate({
      strategy: deps.options.warm,
      limit: deps.api,
      ttlMs: prefix.ttl === '1h' ? 3_600_000 : 300_000,
      clock: deps.clock,
      readable: readabilityOf(prefix.provider),
    });
    deps.admission.retryAfterStop();
    if (deps.options.admission === 'on') deps.remote?.retryAfterStop?.(deps.modelClass(prefix.snapshot.model));
    this.#admission = new FanOutGate({
      scheduler: deps.admission,
      inner: this.#gate,
      prefixReadable: () => prefix.markers === 'boundary' && this.#gate.state === 'warm',
      turnsRead: prefix.childMarker !== false,
      modelClass: deps.modelClass(prefix.snapshot.model),
      tokensPerByte: () => (this.#accounts.sharedTokens ?? prefix.approxTokens) / Math.max(1, prefix.byteLength),
      clock: deps.clock,
    });
    this.#log = deps.runDir ? openEventLog(deps.runDir) : undefined;
    this.#logLine({
      type: 'fanout-start',
      at: deps.clock.now(),
      forks: this.#states.map((s) => ({ forkId: s.id, directive: s.directive })),
    });
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

  warm(): Promise<void> {
    return Promise.race([this.#gate.whenWarm(), this.#settled.then(() => undefined)]);
  }

  cancel(): void {
    this.#abort.abort(new ForkcacheError('FORK_CANCELLED', 'fan-out cancelled')); // the counts and the pre-warm too
    for (const state of this.#states) state.cancel();
  }

  async #run(): Promise<FanOutResult> {
    const { client, options } = this.#deps;
    const signal = this.#abort.signal;
    if (this.#deps.chatClient) {
      // Chat Completions has no token count: the warm-up measures the prefix as it writes it
      const { chatClient: chat, clock } = this.#deps;
      await warmUpChatFanOut({
        client: chat,
        prefix: this.prefix,
        forks: this.#specs.length,
        warm: options.warm,
        gate: this.#gate,
        accounts: this.#accounts,
        clock,
        log: (line) => this.#logLine(line),
        signal,
      });
    } else {
      this.#accounts.sharedTokens = await measureSharedTokens(client, this.prefix, signal);
      // fresh agents are what they are: no fresh-agent baseline to measure for them
      if (!this.#deps.agent) this.#accounts.freshBase = await measureFreshBase(client, this.prefix.snapshot, signal);
      if (options.warm === 'prewarm' && !signal.aborted) await this.#prewarm();
    }
    const stopSampling = this.#log
      ? sampleBudget(this.#deps.admission, this.#deps.clock, (line) => this.#logLine(line))
      : () => undefined;
    try {
      this.#recordEarlierTurns();
      const results = await Promise.all(this.#states.map((state) => this.#dispatch(state)));
      const summary = this.#summary(results);
      this.#logLine({ type: 'fanout-end', at: this.#deps.clock.now() });
      return { fanoutId: this.id, forks: results, summary };
    } finally {
      stopSampling();
      // whatever happened, iterators end and the log is closed
      this.#queue.end();
      await new Promise<void>((resolve) => (this.#log ? this.#log.end(resolve) : resolve()));
    }
  }

  async #prewarm(): Promise<void> {
    // Nothing to pre-warm without shared messages or without a boundary marker: first-child applies.
    if (this.prefix.headEnd === 'messages-open' || this.prefix.markers !== 'boundary') return;
    this.#gate.beginWarming();
    const at = this.#deps.clock.now();
    try {
      this.#logLine({ type: 'warmup-start', at });
      const message = await sendPrewarm(
        this.#deps.client,
        this.prefix,
        () => this.#gate.markWarm(),
        this.#abort.signal,
      );
      this.#logLine({ type: 'warmup-end', at: this.#deps.clock.now(), usage: message.usage });
      this.#accounts.warmup(message.usage, at);
    } catch (err) {
      this.#logLine({ type: 'warmup-failed', at: this.#deps.clock.now(), error: toWireError(err) });
      this.#gate.warmingFailed(); // the first child warms instead
    }
  }

  #emit(event: FanOutEvent): void {
    this.#queue.push(event);
    if (!this.#log) return;
    if (event.type === 'fork-end') {
      const { result } = event;
      this.#logLine({
        type: 'fork-end',
        forkId: event.forkId,
        at: event.at,
        status: event.status,
        turns: result.turns,
        toolCalls: result.toolCalls,
        filesChanged: result.filesChanged,
        error: result.error ?? null,
      });
    } else this.#logLine(event);
  }

  /** A resumed fan-out: the turns done before are part of this tree's usage. */
  #recordEarlierTurns(): void {
    this.#specs.forEach((spec, i) => {
      for (const request of spec.start.previous.requests) this.#accounts.request(this.#states[i]!.id, request);
      for (const request of spec.start.previous.failedAttempts)
        this.#accounts.failedAttempt(this.#states[i]!.id, request);
    });
  }

  #dispatch(state: ForkState): Promise<ForkResult> {
    const spec = this.#specs[state.index]!;
    if (spec.finished) return Promise.resolve(this.#finish(state, spec.finished));
    const abort = new AbortController();
    state.onCancel = () => {
      abort.abort(new ForkcacheError('FORK_CANCELLED', 'fork cancelled'));
      // a queued fork ends at once; the slot it waited for will find it finished
      if (state.status === 'queued')
        this.#finish(state, mergeOutcome(spec.start, emptyOutcome('cancelled', toWireError(abort.signal.reason))));
    };
    if (state.cancelRequested) state.onCancel();
    const run = this.#deps.slots(async () => {
      if (state.final) return state.final;
      state.status = 'running';
      this.#emit({ type: 'fork-start', forkId: state.id, at: this.#deps.clock.now() });
      let tree: Worktree | undefined;
      try {
        if (this.#deps.options.isolation === 'worktree' && this.#deps.runDir)
          tree = await openWorktree(this.#deps.options.workspace, join(this.#deps.runDir, 'worktrees'), state.id);
      } catch (err) {
        return this.#finish(state, emptyOutcome('failed', toWireError(err)));
      }
      const ctx = {
        deps: this.#deps,
        prefix: this.prefix,
        // remote hosts reserve from the budget they share in Redis: here only the warm-first barrier
        gate: this.#deps.remote ? this.#gate : this.#admission.forFork(state.id),
        shared: () => ({
          modelClass: this.#deps.modelClass(this.prefix.snapshot.model),
          tokensPerByte:
            (this.#accounts.sharedTokens ?? this.prefix.approxTokens) / Math.max(1, this.prefix.byteLength),
          readsShared: this.prefix.markers === 'boundary' && this.#gate.state === 'warm',
        }),
        forkId: state.id,
        index: state.index,
        base: spec.base,
        workspace: tree?.workspace ?? this.#deps.options.workspace,
        transcriptPath: this.#transcriptPath(state),
        abort,
        onEvent: (event: LoopEvent) => this.#onLoopEvent(state, event),
        onHost: (hostId: string) =>
          this.#emit({ type: 'fork-host', forkId: state.id, at: this.#deps.clock.now(), hostId }),
        onAsk: (tool: string, input: unknown) => this.#ask(state, tool, input),
      };
      const remote = this.#deps.remote;
      const outcome: ForkOutcome = await runWithRestarts({
        base: spec.base,
        // a remote host reads the transcript itself and reports the whole fork
        start: remote ? FRESH_START(spec.base) : spec.start,
        transcriptPath: ctx.transcriptPath,
        maxRestarts: remote ? 0 : this.#deps.options.maxWorkerRestarts,
        aborted: () => abort.signal.aborted,
        run: (start, attempt) => (remote ? remote.run(ctx) : runForkInWorker(ctx, start, attempt)),
        onRestart: (attempt, start) => {
          // an event posted just before the worker died may be lost; the transcript is not
          for (const request of start.previous.requests) this.#accounts.request(state.id, request);
          for (const request of start.previous.failedAttempts) this.#accounts.failedAttempt(state.id, request);
          this.#emitRestart(state, attempt, start);
        },
      });
      if (tree) {
        const closed = await closeWorktree(tree, `forkcache ${state.id}: ${state.directive.slice(0, 200)}`).catch(
          (err: unknown) => toWireError(err),
        );
        if ('code' in closed) return this.#finish(state, { ...outcome, status: 'failed', error: closed });
        return this.#finish(state, outcome, closed);
      }
      return this.#finish(state, outcome);
    });
    // A fork that fails in an unexpected way (a broken transcript, the ledger, Redis) ends as
    // failed with the reason; its siblings and the fan-out go on.
    return run.catch((err: unknown) =>
      this.#finish(state, mergeOutcome(spec.start, emptyOutcome('failed', toWireError(err)))),
    );
  }

  #emitRestart(state: ForkState, attempt: number, start: StartPoint): void {
    this.#emit({
      type: 'fork-restart',
      forkId: state.id,
      at: this.#deps.clock.now(),
      attempt,
      turnsDone: start.turnsDone,
      interrupted: start.interrupted,
    });
  }

  /** A fork's permission question: the embedder's handler decides; without one the answer is no. */
  async #ask(state: ForkState, tool: string, input: unknown): Promise<PermissionAnswer> {
    const handler = this.#deps.onPermission ?? DENY_UNASKED;
    const answer = await handler({ forkId: state.id, tool, input });
    const result = typeof answer === 'boolean' ? { allow: answer } : answer;
    this.#logLine({
      type: 'permission',
      forkId: state.id,
      at: this.#deps.clock.now(),
      tool,
      allow: result.allow,
      reason: result.reason ?? null,
    });
    return result;
  }

  #transcriptPath(state: ForkState): string | undefined {
    return this.#deps.runDir ? transcriptPath(this.#deps.runDir, state.id) : undefined;
  }

  /**
   * Events are re-stamped on the engine's clock as they arrive: a worker has only the system
   * clock, and an injected clock (tests, the bench's emulated time) must be the one timeline
   * of the ledger and the event log. The request's own durations stay as the worker measured.
   */
  #onLoopEvent(state: ForkState, event: LoopEvent): void {
    const at = this.#deps.clock.now();
    if (event.type === 'turn-start') this.#turnStartedAt.set(state.id, at);
    if (event.type === 'turn-end') {
      state.turns = event.turn;
      this.#accounts.request(state.id, event.request, this.#turnStartedAt.get(state.id) ?? at);
    } else if (event.type === 'attempt-failed')
      this.#accounts.failedAttempt(state.id, event.request, this.#turnStartedAt.get(state.id) ?? at);
    else if (event.type === 'tool-call') state.lastTool = event.name;
    else if (event.type === 'turn-retry' && this.#deps.remote) this.#admission.countRemote(event.error); // hosts' 429s, for the summary
    this.#emit({ forkId: state.id, ...event, at });
  }

  #finish(state: ForkState, outcome: ForkOutcome, worktree?: WorktreeResult): ForkResult {
    if (state.final) return state.final;
    const result: ForkResult = {
      ...outcome,
      forkId: state.id,
      index: state.index,
      directive: state.directive,
      sharing: this.prefix.snapshot.source,
      transcriptPath: this.#transcriptPath(state),
      ...(worktree ? { worktree } : {}),
    };
    state.status = outcome.status;
    state.final = result;
    this.#accounts.status(state.id, outcome.status);
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
        shared_tokens: this.#accounts.sharedTokens ?? null,
        drift_events: results.filter((r) => r.error?.code === 'FORK_PREFIX_DRIFT').length,
        source: this.prefix.snapshot.source,
      },
      warmups: this.#gate.warmups,
      run_dir: this.#deps.runDir,
      rate_limits: this.#admission.summary(results.some((r) => r.error?.code === 'RATE_LIMIT_SPEND_CAP')),
    };
  }
}
