import { MessageChannel } from 'node:worker_threads';
import { ForkcacheError, toWireError } from '../util/errors.ts';
import { FORK_QUERY_SOURCE } from '../wire/fork-text.ts';
import type { ForkChild } from '../fork/layouts.ts';
import type { ForkOutcome, LoopEvent, LoopPrompt, RequestGate } from '../loop/types.ts';
import type { FrozenPrefix } from '../prefix/freeze.ts';
import type { PermissionAnswer, PermissionPolicy } from '../tools/permissions.ts';
import type { TurnRetryOptions } from '../loop/retry.ts';
import type { ToolLimits } from '../tools/limits.ts';
import { type ToolFlags, toolFlagsOf } from '../tools/tool-flags.ts';
import type { ToolSetName } from '../tools/client-tools/types.ts';
import type { ExecutableToolName } from '../wire/tool-names.ts';
import { emptyOutcome, type StartPoint, startFields } from './fork-attempts.ts';
import { loadRunKey, protectedDirs } from '../run-dir/run-key.ts';
import { type HostCallHandler, type OutputCheckHandler, servePort } from './port-server.ts';
import type { HostToolInfo } from '../tools/host-tools.ts';
import type { ForkCheckSpec, ForkTask } from './protocol.ts';
import type { TestHooks } from './test-hooks.ts';
import type { ThreadPool } from './thread-pool.ts';
import { type WorkerSettings, workerSettings } from '../settings/engine-settings.ts';

/**
 * The engine's settings a fork's task is built from. The engine's resolved options satisfy
 * it; the pool (and the distributed backend) read only these, and never import the engine.
 * The tool flags (`tools/tool-flags.ts`) come whole: the task carries every one; so do the
 * declared settings that travel to the worker (`settings/engine-settings.ts`, `worker`).
 */
export interface DispatchSettings extends ToolFlags, WorkerSettings<'loop'>, WorkerSettings<'tools'> {
  api: ForkTask['api'];
  admission: 'on' | 'off';
  turnRetry: TurnRetryOptions;
  allow: readonly ExecutableToolName[];
  toolLimits: Partial<ToolLimits>;
  secrets: string[];
  /** The runs directory: out of every tool's reach, hidden in the sandbox. */
  runsDir: string | undefined;
  permissions: PermissionPolicy;
  testHooks: TestHooks;
}

/** The fan-out's answer to "whose tools": the set, the client's working directory, the denied names. */
export interface ForkTools {
  toolSet: ToolSetName;
  clientRoot: string | undefined;
  deny: readonly string[];
}

export interface DispatchDeps {
  options: DispatchSettings;
  pool: Pick<ThreadPool, 'run'>;
  /**
   * `fork` (default, undefined): children share the parent's prefix. `fresh`: agents of an
   * explicit type, with their own system prompt and tools, sharing nothing (recorded as such
   * in the ledger).
   */
  agent?: { kind: 'fresh'; type: string; allow: readonly ExecutableToolName[] } | undefined;
}

export interface DispatchContext {
  deps: DispatchDeps;
  prefix: FrozenPrefix;
  gate: RequestGate;
  forkId: string;
  index: number;
  /** The fork's continuation before any turn (the distributed backend sends it; hosts resume from transcripts). */
  base: ForkChild;
  workspace: string;
  /** Whose tools the fork runs, from the fan-out's preflight (undefined: forkcache's own). */
  tools?: ForkTools | undefined;
  transcriptPath: string | undefined;
  /** The plan's check of this fork (substituted), if the plan has one. */
  check?: ForkCheckSpec | undefined;
  /** The fork is meant to change files (it has a target file, or the fan-out requires a change). */
  judgeChange?: boolean | undefined;
  /** `resume --retry`: the user turn that restarts the fork (the remote backend sends it with the job). */
  prompt?: LoopPrompt | undefined;
  abort: AbortController;
  onEvent(event: LoopEvent): void;
  /** The distributed backend names the host running the fork (again when another takes over). */
  onHost?(hostId: string): void;
  onAsk(tool: string, input: unknown): Promise<PermissionAnswer>;
  /** The embedder's host tools this fork may call, and what runs a call (on this thread). */
  host?: { tools: readonly HostToolInfo[]; call: HostCallHandler } | undefined;
  /** The fan-out's output schema, held on this thread: what checks each of the fork's reports. */
  output?: OutputCheckHandler | undefined;
  /** For the distributed backend's shared admission: the model class, tokens per byte, and whether the prefix is readable now. */
  shared?(): { modelClass: string; tokensPerByte: number; readsShared: boolean };
}

/**
 * Run one attempt of a fork in the pool: its own MessagePort carries the gate's permits,
 * permission questions and events; the SAB travels by reference. A worker that dies ends the
 * attempt with `FORK_WORKER_FAILED` (the caller may continue from the transcript).
 */
export async function runForkInWorker(ctx: DispatchContext, start: StartPoint, attempt: number): Promise<ForkOutcome> {
  const { options, pool } = ctx.deps;
  const { port1, port2 } = new MessageChannel();
  const server = servePort(port1, ctx.gate, ctx.abort.signal, ctx.onEvent, ctx.onAsk, ctx.host?.call, ctx.output);
  const onAbort = (): void => port1.postMessage({ t: 'cancel' });
  ctx.abort.signal.addEventListener('abort', onAbort, { once: true });
  const agent = ctx.deps.agent;
  const exitWorker = options.testHooks.exitWorker;
  const task: ForkTask = {
    kind: 'fork',
    forkId: ctx.forkId,
    prefix: ctx.prefix.sab,
    port: port2,
    ...startFields(start),
    // under admission the scheduler owns 429/529 retries: the SDK must not retry on its own
    api: options.admission === 'on' ? { ...options.api, maxRetries: 0 } : options.api,
    loop: {
      ...workerSettings(options, 'loop'),
      querySource: agent ? `agent:custom:${agent.type}` : FORK_QUERY_SOURCE,
      marker: ctx.prefix.childMarker,
      retry: options.turnRetry,
      gateRetries: options.admission === 'on',
      requireReport: agent === undefined,
      ...(ctx.check ? { check: ctx.check } : {}),
      ...(ctx.judgeChange ? { judgeChange: true } : {}),
      ...(ctx.output ? { output: true } : {}),
    },
    tools: {
      workspace: ctx.workspace,
      allow: [...(agent?.allow ?? options.allow)],
      limits: options.toolLimits,
      ...workerSettings(options, 'tools'),
      flags: toolFlagsOf(options),
      secrets: options.secrets,
      protect: protectedDirs(options.runsDir),
      ...(ctx.host && ctx.host.tools.length > 0 ? { host: [...ctx.host.tools] } : {}),
    },
    ...(ctx.tools
      ? { clientTools: { toolSet: ctx.tools.toolSet, clientRoot: ctx.tools.clientRoot, deny: [...ctx.tools.deny] } }
      : {}),
    transcriptPath: ctx.transcriptPath,
    runKey: ctx.transcriptPath === undefined ? undefined : loadRunKey().bytes.toString('hex'),
    permissions: options.permissions,
    testHooks:
      attempt === 0 && exitWorker?.forkIndex === ctx.index
        ? { exitAfterTurn: exitWorker.afterTurn, how: exitWorker.how ?? 'exit' }
        : {},
  };
  try {
    const outcome = (await pool.run(task, { transferList: [port2] })) as ForkOutcome;
    await server.ended; // the port's messages are ordered: every event is in before `end`
    return outcome;
  } catch (err) {
    if (ctx.abort.signal.aborted) return emptyOutcome('cancelled', toWireError(ctx.abort.signal.reason));
    return emptyOutcome(
      'failed',
      new ForkcacheError('FORK_WORKER_FAILED', `worker failed: ${(err as Error).message}`, { cause: err }).toWire(),
    );
  } finally {
    ctx.abort.signal.removeEventListener('abort', onAbort);
    server.close();
  }
}
