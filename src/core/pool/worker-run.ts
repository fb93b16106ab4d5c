import type { MessagePort } from 'node:worker_threads';
import { transcriptDirectiveOf } from '../fork/directive.ts';
import { runForkLoop } from '../loop/run-fork.ts';
import type { ForkOutcome, GatePermit, LoopEvent, OutputVerdict, RequestGate } from '../loop/types.ts';
import type { OpenForkWire } from '../loop/transport.ts';
import { type AttachedPrefix, attachFrozenPrefix } from '../prefix/sab.ts';
import { fromWireError, toWireError, ForkcacheError } from '../util/errors.ts';
import type { RequestCost } from '../rate-limits/report.ts';
import { createToolExecutor, type PermissionAsker, type ToolExecutor } from '../tools/executor.ts';
import type { HostToolInfo, HostToolSet } from '../tools/host-tools.ts';
import { toolError, toolOk, type ToolErrorCode, type ToolResult } from '../tools/result.ts';
import type { ForkTask, MainToWorker, WorkerToMain } from './protocol.ts';
import { JsonlTranscript } from '../run-dir/transcript.ts';
import { rerunReadOnly } from './rerun-tools.ts';
import { loadRunKey, protectedDirs, type RunKey, runKeyFromHex } from '../run-dir/run-key.ts';
import { runsDirOf } from '../run-dir/files.ts';

/**
 * The gate on the worker side: each acquire is a round trip to the main thread, which owns
 * the warm-first barrier and the API concurrency limit for every fork of the engine.
 */
class PortGate implements RequestGate {
  readonly #port: MessagePort;
  readonly #pending = new Map<number, { resolve: (p: GatePermit) => void; reject: (e: unknown) => void }>();
  readonly #questions = new Map<number, (answer: { allow: boolean; reason?: string | undefined }) => void>();
  readonly #hostCalls = new Map<number, { resolve: (r: ToolResult) => void; reject: (e: unknown) => void }>();
  readonly #verdicts = new Map<number, { resolve: (v: OutputVerdict) => void; reject: (e: unknown) => void }>();
  #seq = 0;

  constructor(port: MessagePort) {
    this.#port = port;
  }

  /** Grants, denials and answers (the task's own listener handles `cancel`). */
  onMessage(message: Exclude<MainToWorker, { t: 'cancel' }>): void {
    if (message.t === 'answer') {
      this.#questions.get(message.seq)?.({ allow: message.allow, reason: message.reason });
      this.#questions.delete(message.seq);
      return;
    }
    if (message.t === 'host-result') {
      const call = this.#hostCalls.get(message.seq);
      this.#hostCalls.delete(message.seq);
      call?.resolve(
        message.isError
          ? toolError((message.code ?? 'TOOL_HOST_FAILED') as ToolErrorCode, message.content)
          : toolOk(message.content),
      );
      return;
    }
    if (message.t === 'output-verdict') {
      const waiting = this.#verdicts.get(message.seq);
      this.#verdicts.delete(message.seq);
      waiting?.resolve(message.ok ? { ok: true } : { ok: false, errors: message.errors ?? 'no reason given' });
      return;
    }
    const waiter = this.#pending.get(message.seq);
    if (!waiter) return;
    this.#pending.delete(message.seq);
    if (message.t === 'deny') {
      // a coded denial (the API's spend cap, the run's own) ends the fork with that code, not as an API error
      waiter.reject(
        message.code?.startsWith('RATE_LIMIT_') ||
          message.code === 'SPEND_CAP_MAX_USD' ||
          message.code === 'FORK_CANCELLED'
          ? fromWireError({ code: message.code, message: message.message })
          : new ForkcacheError('INTERNAL', message.message),
      );
      return;
    }
    const seq = message.seq;
    waiter.resolve({
      started: (report) => this.#post({ t: 'started', seq, report }),
      release: (report) => this.#post({ t: 'release', seq, report }),
      slot: message.slot,
    });
  }

  acquire(request: {
    turn: number;
    first: boolean;
    signal?: AbortSignal | undefined;
    cost?: RequestCost | undefined;
  }): Promise<GatePermit> {
    request.signal?.throwIfAborted();
    const seq = ++this.#seq;
    return new Promise<GatePermit>((resolve, reject) => {
      this.#pending.set(seq, { resolve, reject });
      this.#post({ t: 'acquire', seq, turn: request.turn, first: request.first, cost: request.cost });
    });
  }

  /** The policy said ask: the main thread answers (a callback, a person, or no). */
  ask(tool: string, input: unknown): Promise<{ allow: boolean; reason?: string | undefined }> {
    const seq = ++this.#seq;
    return new Promise((resolve) => {
      this.#questions.set(seq, resolve);
      this.#post({ t: 'ask', seq, tool, input });
    });
  }

  /** A host tool call: its handler runs on the main thread; the fork's abort stops the wait. */
  callHost(tool: string, input: unknown, toolUseId: string, signal: AbortSignal | undefined): Promise<ToolResult> {
    signal?.throwIfAborted();
    const seq = ++this.#seq;
    return new Promise<ToolResult>((resolve, reject) => {
      this.#hostCalls.set(seq, { resolve, reject });
      this.#post({ t: 'host-call', seq, tool, input, toolUseId });
    });
  }

  /** The fan-out's output schema is on the main thread: it judges the fork's final text. */
  checkOutput(text: string, signal: AbortSignal | undefined): Promise<OutputVerdict> {
    signal?.throwIfAborted();
    const seq = ++this.#seq;
    return new Promise<OutputVerdict>((resolve, reject) => {
      this.#verdicts.set(seq, { resolve, reject });
      this.#post({ t: 'output-check', seq, text });
    });
  }

  rejectAll(reason: unknown): void {
    for (const waiting of this.#verdicts.values()) waiting.reject(reason);
    this.#verdicts.clear();
    for (const call of this.#hostCalls.values()) call.reject(reason);
    this.#hostCalls.clear();
    for (const answer of this.#questions.values()) answer({ allow: false, reason: 'cancelled' });
    this.#questions.clear();
    for (const waiter of this.#pending.values()) waiter.reject(reason);
    this.#pending.clear();
  }

  #post(message: WorkerToMain): void {
    this.#port.postMessage(message);
  }
}

/** The executor's host tools: the task names them, the main thread runs them. */
function hostToolSet(infos: readonly HostToolInfo[], gate: PortGate): HostToolSet | undefined {
  if (infos.length === 0) return undefined;
  const byName = new Map(infos.map((info) => [info.name, info]));
  return {
    has: (name) => byName.has(name),
    readOnly: (name) => byName.get(name)?.readOnly === true,
    call: (name, input, { signal, toolUseId }) => gate.callHost(name, input, toolUseId, signal),
  };
}

/** Test-only: allocate until the worker's `resourceLimits` kill it. */
function exhaustHeap(): never {
  const hoard: number[][] = [];
  for (;;) hoard.push(new Array<number>(1_000_000).fill(hoard.length));
}

/** The tool executor of a fork's task: its tools, flags, limits and sandbox, everything to redact. */
export function taskExecutor(
  task: ForkTask,
  key: RunKey | undefined,
  host: HostToolSet | undefined,
  ask?: PermissionAsker,
): ToolExecutor {
  return createToolExecutor({
    permissions: task.permissions,
    ...(ask ? { ask } : {}),
    workspace: task.tools.workspace,
    allow: task.tools.allow,
    limits: task.tools.limits,
    sandbox: task.tools.sandbox,
    ...task.tools.flags,
    // a host's task (distributed) names none: its runs directory is the transcript's
    protect: task.tools.protect ?? protectedDirs(runsDirOf(task.transcriptPath)),
    // the key must never reach the model through a tool result (bash can find it: issue 15, case 3)
    secrets: [task.api.apiKey, ...task.tools.secrets, ...(key ? [key.bytes.toString('hex')] : [])],
    host,
    toolSet: task.clientTools?.toolSet,
    clientRoot: task.clientTools?.clientRoot,
    deny: task.clientTools?.deny,
  });
}

/**
 * Run one fork task: what the worker entry calls; runs in-thread in tests as well. `openForkWire`:
 * the provider adapters' (src/providers/registry.ts), handed in by the worker entry.
 */
export async function runForkTask(task: ForkTask, openForkWire: OpenForkWire): Promise<ForkOutcome> {
  try {
    return await runAttached(task, attachFrozenPrefix(task.prefix), openForkWire);
  } catch (err) {
    // a fork that cannot start (a corrupt prefix, a missing workspace) fails with its own
    // reason: thrown, it would pass for a dead worker and be restarted in vain
    task.port.postMessage({ t: 'end' } satisfies WorkerToMain);
    task.port.close();
    return {
      status: 'failed',
      turns: task.turnsDone,
      toolCalls: 0,
      requests: [],
      finalText: '',
      report: undefined,
      messages: [...task.child.messages],
      filesChanged: [],
      error: toWireError(err),
    };
  }
}

async function runAttached(task: ForkTask, prefix: AttachedPrefix, openForkWire: OpenForkWire): Promise<ForkOutcome> {
  const port = task.port;
  const controller = new AbortController();
  const gate = new PortGate(port);
  port.on('message', (message: MainToWorker) => {
    if (message.t === 'cancel') {
      controller.abort(new ForkcacheError('FORK_CANCELLED', 'fork cancelled'));
      gate.rejectAll(controller.signal.reason);
    } else gate.onMessage(message);
  });
  const key = task.transcriptPath === undefined ? undefined : task.runKey ? runKeyFromHex(task.runKey) : loadRunKey();
  const transcript = task.transcriptPath ? new JsonlTranscript(task.transcriptPath, key, task.jobId) : undefined;
  if (transcript && task.turnsDone === 0) {
    transcript.start(task.forkId, prefix.sha256, transcriptDirectiveOf(task.child));
  }
  const tools = taskExecutor(task, key, hostToolSet(task.tools.host ?? [], gate), (name, input) =>
    gate.ask(name, input),
  );
  try {
    const wire = openForkWire(task.api, prefix);
    const child = await rerunReadOnly(task.rerun ?? [], task.child, tools, transcript, controller.signal);
    return await runForkLoop({
      prefix,
      child,
      turnsDone: task.turnsDone,
      transport: wire.transport,
      body: wire.body,
      tools,
      gate,
      maxTurns: task.loop.maxTurns,
      maxTokens: task.loop.maxTokens,
      querySource: task.loop.querySource,
      marker: task.loop.marker,
      retry: task.loop.retry,
      gateRetries: task.loop.gateRetries,
      requireReport: task.loop.requireReport,
      judgeChange: task.loop.judgeChange,
      output: task.loop.output ? { validate: (text, signal) => gate.checkOutput(text, signal) } : undefined,
      // in the worker, like bash: the executor's sandbox, environment and redaction (docs/plans.md)
      check: task.loop.check && {
        command: task.loop.check.command,
        retries: task.loop.check.retries,
        run: (signal) =>
          tools.check(task.loop.check!.command, {
            signal,
            timeoutMs: task.loop.check!.timeoutMs,
            trackOutputs: task.loop.check!.trackOutputs,
          }),
      },
      judgeLast: task.judgeLast,
      prompt: task.prompt,
      signal: controller.signal,
      onEvent: (event: LoopEvent) => {
        port.postMessage({ t: 'event', event } satisfies WorkerToMain);
        // Test-only fault: the thread dies as a crash would, after a turn and its tools.
        if (event.type === 'turn-start' && event.turn === (task.testHooks.exitAfterTurn ?? -2) + 1) {
          if (task.testHooks.how === 'out-of-memory') exhaustHeap();
          process.exit(70);
        }
      },
      transcript,
    });
  } finally {
    port.postMessage({ t: 'end' } satisfies WorkerToMain);
    port.close();
  }
}
