import type { MessagePort } from 'node:worker_threads';
import type { ForkChild } from '../fork/layouts.ts';
import type { TurnRetryOptions } from '../loop/retry.ts';
import type { CacheTtl } from '../wire/cache.ts';
import type { LoopEvent, LoopPrompt } from '../loop/types.ts';
import type { ApiEndpoint } from '../loop/transport.ts';
import type { RequestCost, RequestReport } from '../rate-limits/report.ts';
import type { ExecutableToolName } from '../wire/tool-names.ts';
import type { ToolLimits } from '../tools/limits.ts';
import type { ToolFlags } from '../tools/tool-flags.ts';
import type { PermissionPolicy } from '../tools/permissions.ts';
import type { HostToolInfo } from '../tools/host-tools.ts';
import type { ToolSetName } from '../tools/client-tools/types.ts';
import type { RerunCall } from './resume-messages.ts';
import type { WorkerSettings } from '../settings/engine-settings.ts';

/**
 * Messages on a fork's private MessagePort. The worker asks the main thread for a permit
 * before every request (the warm-first barrier and the API concurrency limit live on the main
 * thread), and streams its events back. Small plain objects: structured clone is the cheapest
 * way to move them (see bench/boundary.ts).
 */
export type WorkerToMain =
  | { t: 'acquire'; seq: number; turn: number; first: boolean; cost?: RequestCost | undefined }
  | { t: 'started'; seq: number; report?: RequestReport | undefined }
  | { t: 'release'; seq: number; report?: RequestReport | undefined }
  | { t: 'event'; event: LoopEvent }
  /** The permission policy says ask: the main thread decides (a callback, a person, or no). */
  | { t: 'ask'; seq: number; tool: string; input: unknown }
  /** A host tool's call: its handler runs on the main thread (tools/host-tools.ts). */
  | { t: 'host-call'; seq: number; tool: string; input: unknown; toolUseId: string }
  /** The fork's final text, to check against the fan-out's output schema (held on the main thread). */
  | { t: 'output-check'; seq: number; text: string }
  /** Last message of a task: every event before it has been delivered. */
  | { t: 'end' };

export type MainToWorker =
  /** `slot`: the llama.cpp slot this request is pinned to, when the permit names one. */
  | { t: 'grant'; seq: number; slot?: number | undefined }
  /** `code`: the ForkcacheError code, rebuilt in the worker (e.g. `RATE_LIMIT_SPEND_CAP`: the fork stops, resumable). */
  | { t: 'deny'; seq: number; message: string; code?: string | undefined }
  | { t: 'answer'; seq: number; allow: boolean; reason?: string | undefined }
  /** A host tool's result, its size limit applied (`code` set when `isError`). */
  | { t: 'host-result'; seq: number; isError: boolean; content: string; code?: string | undefined }
  /** The output schema's verdict on a final text (`errors`: why it does not match, for the fork). */
  | { t: 'output-verdict'; seq: number; ok: boolean; errors?: string | undefined }
  | { t: 'cancel' };

/** A fork's check as it travels to the worker (and in the manifest, as a template). */
export interface ForkCheckSpec {
  command: string;
  /** Times a failing check's output goes back to the fork before it ends `check_failed`. */
  retries: number;
  timeoutMs: number;
  /** The fork works in a worktree of its own: tell what the check wrote, for its commit to leave out. */
  trackOutputs?: boolean | undefined;
}

/** Everything a worker needs to run one fork. The SAB travels by reference, never copied. */
export interface ForkTask {
  kind: 'fork';
  forkId: string;
  prefix: SharedArrayBuffer;
  child: ForkChild;
  port: MessagePort;
  /** Turns already done (resume). */
  turnsDone: number;
  /** Resume: judge the last turn (no tool call) before sending anything (see `ForkLoopOptions.judgeLast`). */
  judgeLast?: { stopReason: string | null } | undefined;
  /** Resume: a user turn to add before the first request (`resume --retry`). */
  prompt?: LoopPrompt | undefined;
  /** Read-only calls interrupted by the stop (resume): run again, their results put in `child`. */
  rerun?: RerunCall[] | undefined;
  /** Where the fork's requests go; the key is never logged or written (the SDK client is built inside the worker). */
  api: ApiEndpoint;
  /** The declared settings that travel in the loop (`maxTurns`, `maxTokens`: `settings/engine-settings.ts`), and the loop's own. */
  loop: WorkerSettings<'loop'> & {
    querySource: string;
    /** The child's moving marker (`false`: send no marker at all). */
    marker: CacheTtl | false;
    retry: TurnRetryOptions;
    /** The main thread's admission owns 429/529 waits (see `ForkLoopOptions.gateRetries`). */
    gateRetries?: boolean | undefined;
    /** Fork children end with a labelled report (default true; fresh agents: false). */
    requireReport?: boolean | undefined;
    /** The plan's check of this fork, substituted (the worker runs it through its tool executor). */
    check?: ForkCheckSpec | undefined;
    /** The fork is meant to change files: done having changed none ends it `no_change`. */
    judgeChange?: boolean | undefined;
    /** The fan-out has an output schema: the worker asks the main thread to check each report (`output-check`). */
    output?: boolean | undefined;
  };
  /** The declared settings that travel to the tools (`sandbox`: `settings/engine-settings.ts`), and the tools' own. */
  tools: WorkerSettings<'tools'> & {
    workspace: string;
    allow: ExecutableToolName[];
    limits: Partial<ToolLimits>;
    /** Every tool flag (`network` …), as the engine resolved it or the host's policy allowed it; the executor takes them as given. */
    flags: ToolFlags;
    /** Removed from every tool result, with the API key. */
    secrets: string[];
    /** Directories out of every tool's reach (the run and state directories; `.git` always is). */
    protect?: string[] | undefined;
    /** The embedder's tools this fork may call (run on the main thread over the port). */
    host?: HostToolInfo[] | undefined;
  };
  /**
   * Whose tools the fork runs, the client's working directory its absolute paths are written
   * in, and the tools refused on purpose (`denyTools`); undefined: forkcache's own tools.
   * Beside `tools`, not in it: a distributed job's fields each have a host rule, and these
   * reach hosts only once the backend has one for them.
   */
  clientTools?: { toolSet: ToolSetName; clientRoot: string | undefined; deny: string[] } | undefined;
  /** JSONL transcript of this fork, appended after every turn (undefined: none). */
  transcriptPath: string | undefined;
  /** A distributed host's task: the job it serves, named in the transcript's `end` (a replay of it is refused). */
  jobId?: string | undefined;
  /**
   * The run key (hex) the transcript's records are signed with; never logged, never in a tool
   * result. Undefined (a distributed host's task): the worker loads this machine's own.
   */
  runKey?: string | undefined;
  /** Which tool calls need asking (checked in the worker; `ask` goes to the main thread). */
  permissions: PermissionPolicy;
  /** Test-only faults. `exitAfterTurn`: the worker thread exits once that turn and its tools are done. */
  testHooks: { exitAfterTurn?: number; how?: 'exit' | 'out-of-memory' };
}
