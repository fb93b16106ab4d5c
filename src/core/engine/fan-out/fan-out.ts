import { ForkcacheError, toWireError } from '../../util/errors.ts';
import type { ForkOutcome, LoopEvent, RequestGate } from '../../loop/types.ts';
import type { FrozenPrefix } from '../../prefix/freeze.ts';
import { transcriptPath } from '../../run-dir/files.ts';
import { decide, DENY_UNASKED, type PermissionAnswer } from '../../tools/permissions.ts';
import { hostToolInfos, runHostTool } from '../../tools/host-tools.ts';
import { DEFAULT_TOOL_LIMITS } from '../../tools/limits.ts';
import { toolError } from '../../tools/result.ts';
import type { DispatchContext } from '../../pool/fork-dispatch.ts';
import { EventQueue } from '../event-queue.ts';
import { FanOutLog } from './log.ts';
import { FanOutAccounts } from './accounts.ts';
import { type FanOutDeps, type ForkSpec, forkIdOf } from './types.ts';
import type { FanOut, FanOutResult, FanOutSummary } from '../../agent/fork-handle.ts';
import { emptyOutcome, mergeOutcome, type StartPoint } from '../../pool/fork-attempts.ts';
import type { FanOutEvent, ForkHandle, ForkResult } from '../../agent/fork-handle.ts';
import { ForkState } from '../../agent/fork-handle.ts';
import type { WarmGate } from '../warm-gate.ts';
import { type FanOutGates, openFanOutGates } from './gates.ts';
import type { EngineHooks } from '../provider.ts';
import type { AdmissionGate } from '../../gate/admission/admission-gate.ts';
import { sampleBudget } from '../../gate/admission/budget-log.ts';
import type { WorktreeResult } from '../../tools/git/worktree.ts';
import { finishInSlot, runForkInSlot } from './fork-slot.ts';
import { REPO_FIELD } from './repos.ts';
import { FanOutWorktrees } from './worktrees.ts';
import { spendCapSummary, spentBefore } from './spend.ts';
import { cappedBeforeStart, firstRequestCost, type NeverAdmitted, QueueCap } from './queue-cap.ts';
import { fanOutSummary, hostSandboxes, hostSummary } from './summary.ts';

/** Some fork goes on from earlier turns, and it has a sibling to go on beside it. */
function resumesSiblings(specs: readonly ForkSpec[]): boolean {
  const going = specs.filter((spec) => !spec.finished);
  return going.length > 1 && going.some((spec) => spec.start.turnsDone > 0);
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
  /** The warm gate behind the engine's rate-limit admission: what each fork's requests ask. */
  readonly #admission: AdmissionGate;
  readonly #shared: FanOutGates['shared'];
  readonly #spend: FanOutGates['spend'];
  readonly #settled: Promise<FanOutResult>;
  readonly #accounts: FanOutAccounts;
  readonly #log: FanOutLog;
  readonly #turnStartedAt = new Map<string, number>();
  /** Refused tool calls by name (the summary's `refused_tools`). */
  readonly #refused = new Map<string, number>();
  /** Aborted by `cancel()`: stops what runs before the forks (token counts, the pre-warm). */
  readonly #abort = new AbortController();
  readonly #worktrees: FanOutWorktrees | undefined;
  /** llama.cpp: the server slots the forks are pinned to, and what filling them did. */
  #warmed: EngineHooks = {};

  constructor(id: string, prefix: FrozenPrefix, specs: readonly ForkSpec[], deps: FanOutDeps) {
    this.id = id;
    this.prefix = prefix;
    this.#deps = deps;
    this.#specs = specs;
    this.#accounts = new FanOutAccounts(deps, prefix);
    this.#states = specs.map((spec, i) => new ForkState(forkIdOf(id, i), i, spec.directive));
    if (deps.foreground) for (const state of this.#states) state.mode = 'foreground';
    const gates = openFanOutGates(deps, prefix, this.#accounts);
    this.#gate = gates.warm;
    this.#admission = gates.admission;
    this.#shared = gates.shared;
    this.#spend = gates.spend;
    // the cap counts the whole run: what earlier passes spent is spent before anything is sent
    const spend = gates.spend;
    if (spend)
      for (const { start } of specs)
        spend.cap.addSpent(spentBefore(spend, [...start.previous.requests, ...start.previous.failedAttempts]));
    this.#log = new FanOutLog(deps.runDir);
    if (deps.options.isolation === 'worktree' && deps.runDir)
      this.#worktrees = new FanOutWorktrees(deps.options.workspace, deps.runDir, {
        maxWorkspaceMb: deps.options.toolLimits.maxWorkspaceMb ?? DEFAULT_TOOL_LIMITS.maxWorkspaceMb,
        maxWhole: deps.options.maxWorktrees,
        repos: deps.options.repos,
      });
    this.#log.line({
      type: 'fanout-start',
      at: deps.clock.now(),
      forks: this.#states.map((s) => ({ forkId: s.id, directive: s.directive })),
    });
    this.#settled = this.#run();
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
    this.#warmed = await this.#deps.connection.warmUp({
      options: this.#deps.options,
      clock: this.#deps.clock,
      agents: Boolean(this.#deps.agent),
      prefix: this.prefix,
      forks: this.#specs.length,
      fanOutId: this.id,
      gate: this.#gate,
      accounts: this.#accounts,
      log: (line) => this.#log.line(line),
      signal: this.#abort.signal,
      spend: this.#spend,
      resumed: resumesSiblings(this.#specs),
    });
    const stopSampling = this.#log.open
      ? sampleBudget(this.#deps.admission, this.#deps.clock, (line) => this.#log.line(line))
      : () => undefined;
    const unwatch = this.#watchQueue();
    try {
      this.#recordEarlierTurns();
      const results = await Promise.all(this.#states.map((state) => this.#dispatch(state)));
      this.#closeSlots();
      const summary = this.#summary(results);
      this.#log.line({ type: 'fanout-end', at: this.#deps.clock.now() });
      return { fanOutId: this.id, forks: results, summary };
    } finally {
      unwatch();
      this.#closeSlots();
      stopSampling();
      // whatever happened, iterators end and the log is closed
      this.#queue.end();
      await this.#log.close();
    }
  }

  #emit(event: FanOutEvent): void {
    this.#queue.push(event);
    this.#log.event(event);
  }

  /** A resumed fan-out: the turns done before are part of this tree's usage. */
  #recordEarlierTurns(): void {
    this.#specs.forEach((spec, i) => {
      this.#accounts.previous(this.#states[i]!.id, spec.start.previous);
    });
  }

  #dispatch(state: ForkState): Promise<ForkResult> {
    // ended before its turn (the spend cap's look at the queue): no slot to wait for
    if (state.final) return Promise.resolve(state.final);
    const spec = this.#specs[state.index]!;
    if (spec.finished) {
      const finished = spec.finished;
      const slot = {
        forkId: state.id,
        directive: state.directive,
        worktrees: this.#worktrees,
        sparseFile: this.#sparseFile(spec),
        repoName: spec.fields?.[REPO_FIELD],
        transcriptPath: this.#transcriptPath(state),
      };
      return finishInSlot(slot, finished).then(({ outcome, worktree }) => this.#finish(state, outcome, worktree));
    }
    const abort = new AbortController();
    state.onCancel = () => {
      abort.abort(new ForkcacheError('FORK_CANCELLED', 'fork cancelled'));
      // a queued fork ends at once; the slot it waited for will find it finished
      if (state.status === 'queued')
        this.#finish(state, mergeOutcome(spec.start, emptyOutcome('cancelled', toWireError(abort.signal.reason))));
    };
    if (state.cancelRequested) state.onCancel();
    const run = this.#inSlot(state, spec, abort);
    // A fork that fails in an unexpected way (a broken transcript, the ledger, Redis) ends as
    // failed with the reason; its siblings and the fan-out go on.
    return run.catch((err: unknown) =>
      this.#finish(state, mergeOutcome(spec.start, emptyOutcome('failed', toWireError(err)))),
    );
  }

  /**
   * The spend cap's look at the queue (queue-cap.ts): every queued fork it can never admit ends
   * `capped` at once. Returns the unsubscribe.
   */
  #watchQueue(): () => void {
    const spend = this.#spend;
    if (!spend || this.#deps.remote) return () => undefined;
    return new QueueCap<ForkState>({
      spend,
      admission: this.#admission,
      costOf: (index) => firstRequestCost(this.prefix, this.#specs[index]!, this.#deps.options, this.#deps.provider),
      queued: () => this.#states.filter((s) => s.status === 'queued' && !s.final && !this.#specs[s.index]!.finished),
      running: () => this.#states.some((s) => s.status === 'running'),
      capped: (never) => this.#capQueued(spend, never),
    }).watch();
  }

  /** Queued forks the cap will never admit end together, as a fork refused at its first request does. */
  #capQueued(spend: NonNullable<FanOutGates['spend']>, never: NeverAdmitted<ForkState>[]): void {
    const at = this.#deps.clock.now();
    const forks = never.map(({ fork }) => fork.id);
    this.#log.line({ type: 'spend-cap-queue', at, roomUsd: spend.cap.maxRoomNano() / 1e9, forks });
    for (const { fork: state, floorNano } of never) {
      const spec = this.#specs[state.index]!;
      const path = this.#transcriptPath(state);
      const transcript = path === undefined ? undefined : { path, forkId: state.id, prefixSha256: this.prefix.sha256 };
      const own = cappedBeforeStart(spec, spend.cap.refusal(floorNano, true).toWire(), transcript);
      this.#finish(state, mergeOutcome(spec.start, own));
    }
  }

  /** Run a fork in a worker slot; on llama.cpp each of its requests takes a server slot of its own. */
  #inSlot(state: ForkState, spec: ForkSpec, abort: AbortController): Promise<ForkResult> {
    const deps = this.#deps;
    return this.#deps.slots(async () => {
      if (state.final) return state.final;
      state.status = 'running';
      this.#emit({ type: 'fork-start', forkId: state.id, at: this.#deps.clock.now() });
      const { outcome, worktree } = await runForkInSlot({
        deps: this.#deps,
        spec,
        forkId: state.id,
        directive: state.directive,
        worktrees: this.#worktrees,
        sparseFile: this.#sparseFile(spec),
        signal: abort.signal,
        repoName: spec.fields?.[REPO_FIELD],
        context: (workspace) => ({
          deps,
          prefix: this.prefix,
          // remote hosts reserve from the budget they share in Redis: here only the warm-first barrier
          gate: this.#pinned(state.id, this.#deps.remote ? this.#gate : this.#admission.forFork(state.id)),
          shared: this.#shared,
          forkId: state.id,
          index: state.index,
          base: spec.base,
          workspace,
          ...(this.#deps.tools ? { tools: this.#deps.tools } : {}),
          transcriptPath: this.#transcriptPath(state),
          // in a worktree of its own the fork's commit leaves out what its check wrote
          ...(spec.check ? { check: this.#worktrees ? { ...spec.check, trackOutputs: true } : spec.check } : {}),
          ...(spec.judgeChange ? { judgeChange: true } : {}),
          ...(spec.start.prompt ? { prompt: spec.start.prompt } : {}),
          abort,
          onEvent: (event: LoopEvent) => this.#onLoopEvent(state, event),
          onHost: (hostId: string) =>
            this.#emit({ type: 'fork-host', forkId: state.id, at: this.#deps.clock.now(), hostId }),
          onAsk: (tool: string, input: unknown) => this.#ask(state, tool, input),
          host: this.#host(state, abort.signal),
          ...(this.#deps.output ? { output: (text: string) => this.#deps.output!.check(state.id, text) } : {}),
        }),
        onRestart: (attempt, start) => {
          // an event posted just before the worker died may be lost; the transcript is not
          this.#accounts.previous(state.id, start.previous);
          this.#emitRestart(state, attempt, start);
        },
      });
      return this.#finish(state, outcome, worktree);
    });
  }

  #sparseFile(spec: ForkSpec): string | undefined {
    return this.#deps.options.sparseWorktrees ? spec.fields?.['file'] : undefined;
  }

  /** llama.cpp: a request waits for a server slot, which its permit names (`id_slot`). */
  #pinned(forkId: string, gate: RequestGate): RequestGate {
    return this.#warmed.pin ? this.#warmed.pin(forkId, gate) : gate;
  }

  /** The warm-up's hooks end with the fan-out, whatever happened (llama.cpp: its slot files are deleted). */
  #closeSlots(): void {
    this.#warmed.close?.();
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
    this.#log.line({
      type: 'permission',
      forkId: state.id,
      at: this.#deps.clock.now(),
      tool,
      allow: result.allow,
      reason: result.reason ?? null,
    });
    return result;
  }

  /** The fan-out's host tools for one fork: its worker calls them over its port; they run here. */
  #host(state: ForkState, signal: AbortSignal): DispatchContext['host'] {
    const tools = this.#deps.hostTools;
    const infos = hostToolInfos(tools);
    if (infos.length === 0) return undefined;
    const deny = new Set(this.#deps.tools?.deny ?? this.#deps.options.denyTools);
    return {
      tools: infos,
      call: (name, input, toolUseId) => {
        const tool = Object.hasOwn(tools, name) ? tools[name] : undefined;
        if (!tool) return Promise.resolve(toolError('TOOL_UNKNOWN', `no host tool ${JSON.stringify(name)}`));
        // the worker's gate refused a denied call already; the handler's own thread checks again
        if (deny.has(name) || decide(this.#deps.options.permissions, name) === 'deny')
          return Promise.resolve(toolError('PERMISSION_DENIED', `Permission denied for ${name}: denied for this run.`));
        return runHostTool(name, tool, input, { signal, forkId: state.id, toolUseId });
      },
    };
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
    else if (event.type === 'tool-call') {
      state.lastTool = event.name;
      if (event.code === 'TOOL_NOT_IN_FORK' || event.code === 'FORK_RECURSION')
        this.#refused.set(event.name, (this.#refused.get(event.name) ?? 0) + 1);
    } else if (event.type === 'turn-retry' && this.#deps.remote) this.#admission.countRemote(event.error); // hosts' 429s, for the summary
    this.#emit({ forkId: state.id, ...event, at });
  }

  #finish(state: ForkState, outcome: ForkOutcome, worktree?: WorktreeResult): ForkResult {
    if (state.final) return state.final;
    const result: ForkResult = {
      ...outcome,
      forkId: state.id,
      index: state.index,
      directive: state.directive,
      ...(this.#specs[state.index]?.fields ? { fields: this.#specs[state.index]!.fields } : {}),
      sharing: this.prefix.snapshot.source,
      transcriptPath: this.#transcriptPath(state),
      ...(worktree ? { worktree } : {}),
      ...this.#deps.output?.valueOf(state.id),
    };
    state.status = outcome.status;
    state.final = result;
    this.#warmed.forkEnded?.(state.id);
    this.#accounts.status(state.id, outcome.status);
    this.#emit({ type: 'fork-end', forkId: state.id, at: this.#deps.clock.now(), status: outcome.status, result });
    state.resolve(result);
    return result;
  }

  #summary(results: ForkResult[]): FanOutSummary {
    return fanOutSummary({
      deps: this.#deps,
      prefix: this.prefix,
      results,
      sharedTokens: this.#accounts.sharedTokens,
      warmups: this.#gate.warmups,
      rateLimits: this.#admission.summary(results.some((r) => r.error?.code === 'RATE_LIMIT_SPEND_CAP')),
      slots: this.#warmed.slotReport,
      more: {
        ...(this.#refused.size > 0 ? { refused_tools: Object.fromEntries(this.#refused) } : {}),
        fork_results: results.map((r) => ({
          fork_id: r.forkId,
          status: r.status,
          directive: r.directive,
          ...(r.fields ? { fields: r.fields } : {}),
          turns: r.turns,
          files_changed: r.filesChanged,
          error: r.error ? { code: r.error.code, message: r.error.message } : null,
          ...(r.host ? { host: hostSummary(r.host) } : {}),
          ...('output' in r ? { output: r.output } : {}),
        })),
        ...(this.#deps.sandbox ? { sandbox: this.#deps.sandbox } : {}),
        require_change: this.#deps.requireChange === true,
        ...(this.#deps.remote ? { host_sandboxes: hostSandboxes(results) } : {}),
        spend_cap: this.#spend
          ? spendCapSummary(this.#spend, this.#spend.cap.view(), results, (id) => this.#admission.restartBoundNano(id))
          : null,
      },
    });
  }
}
