import type Anthropic from '@anthropic-ai/sdk';
import type { LimitFunction } from 'p-limit';
import type { Clock } from '../../util/clock.ts';
import type { ForkChild, ForkLayout } from '../../fork/layouts.ts';
import type { UsageLedger } from '../../ledger/ledger.ts';
import type { ForkOutcome, LoopPrompt } from '../../loop/types.ts';
import type { PermissionHandler } from '../../tools/permissions.ts';
import type { HostTool } from '../../tools/host-tools.ts';
import type { StandardSchemaV1 } from '../../tools/standard-schema.ts';
import type { OutputChecks } from './output.ts';
import type { StartPoint } from '../../pool/fork-attempts.ts';
import type { DispatchContext, DispatchDeps, ForkTools } from '../../pool/fork-dispatch.ts';
import type { ToolSetChoice } from '../../tools/client-tools/types.ts';
import type { ForkCheckSpec } from '../../pool/protocol.ts';
import type { RetryableStatus } from '../../util/fork-status.ts';
import type { ResolvedEngineOptions } from '../options.ts';
import type { AdmissionScheduler } from '../../gate/admission/scheduler.ts';
import type { SandboxReport } from '../../tools/sandbox/report.ts';
import type { SpendCap } from '../../gate/admission/spend-cap.ts';
import type { ProviderAdapter, ProviderConnection } from '../provider.ts';

// What a fan-out hands its caller lives with the handles (src/core/agent/fork-handle.ts).

export interface FanOutOptions {
  layout?: ForkLayout;
  /**
   * Model of a fan-out without a parent snapshot (first turn): forks then run on the fork
   * agent's fallback system prompt and the tool registry's declarations, sharing nothing
   * with a parent. Ignored when a snapshot is given (its model is the cache key's).
   */
  model?: string;
  /** The agent that fans out (the ledger's parent node; default `parent`). */
  parentId?: string;
  /**
   * The parent's last request usage, if the caller has it: tells the ledger how much of the
   * shared prefix the parent had already cached (a warm parent).
   */
  parentUsage?: Anthropic.Usage | undefined;
  /**
   * Record into this ledger (e.g. one that already holds the parent's own turns, so the
   * summary is the whole tree's). Default: a new ledger per fan-out.
   */
  ledger?: UsageLedger;
  /** Aborting it cancels every fork of the fan-out (like `fan.cancel()`). */
  signal?: AbortSignal;
  /** Facts to keep in the run's manifest (e.g. the emulator script a CLI run used), for resume. */
  meta?: Record<string, unknown>;
  /** Start the forks in the foreground (see `ForkHandle.mode`); default background. */
  foreground?: boolean;
  /**
   * A command run in each fork's workspace after the fork reports done (e.g.
   * `! grep -qw oldName {file}`): `{name}` is the fork's field `name`, shell-quoted (see
   * `fields`; `{directive}` is always there). Its failure goes back to the fork as a new turn
   * up to `retries` times (default 1), then the fork ends `check_failed`. See docs/plans.md.
   */
  check?: FanOutCheck;
  /**
   * Per fork, in directive order: the directive's fields (`file` for a plan made from a
   * glob). Substituted into `check`, kept in the manifest, shown in summaries.
   */
  fields?: readonly Readonly<Record<string, string>>[];
  /**
   * Every fork must change a file: one that reports done having changed none ends `no_change`
   * and counts as not done (default false: forks with a `file` field are still judged, and
   * `no_change` counts as done unless every fork ended so). Kept in the manifest.
   */
  requireChange?: boolean;
  /**
   * Request headers of this fan-out, over the engine's `headers`: what the parent's own requests
   * carried that changes what the model does (the AI SDK fork tool passes the app's
   * `anthropic-beta`). Sent by every fork, its warm-up and its token counts; kept in the
   * manifest beside the engine's (credential headers never are), so `forkcache resume` sends them too.
   */
  headers?: Readonly<Record<string, string>>;
  /** Host tools of this fan-out, besides the engine's (`ForkEngineOptions.hostTools`); these win for a name. */
  hostTools?: Record<string, HostTool>;
  /** Whose tools the forks run (default: the engine's `toolSet`, `auto`). */
  toolSet?: ToolSetChoice;
  /** Tools refused in these forks on purpose, on top of the engine's `denyTools`. */
  denyTools?: readonly string[];
  /**
   * Typed results: each child is asked for one JSON value in its report (a ```json block; the
   * schema shown as JSON Schema when it has that form, as zod 4's do), which this schema (zod 4,
   * valibot, arktype: any Standard Schema) checks on the engine's thread. A report that does not
   * match gets one repair turn in the fork's own conversation, the errors quoted; then the fork
   * ends `invalid_output`. A match is the fork's `output` (`ForkResult.output`, the summary's
   * `fork_results[].output`). Kept for resume as its JSON Schema form (zod 4's; one without
   * it is passed to `resume` again); refused with the distributed backend.
   */
  outputSchema?: StandardSchemaV1;
}

/**
 * Options of `engine.resume`. `outputSchema`: the forks are checked against it; by default
 * against the JSON Schema the run's manifest recorded (a schema with no JSON Schema form is not
 * recorded: pass it again).
 */
export interface ResumeOptions extends Omit<FanOutOptions, 'layout' | 'model' | 'check' | 'fields' | 'requireChange'> {
  /**
   * Forks that ended in these statuses run again: their conversation continues with a turn
   * asking them to carry out the directive again (their earlier edits are in the workspace).
   * Completed forks never re-run; failed and cancelled ones are always continued.
   */
  retry?: readonly RetryableStatus[];
  /**
   * The integration step's fix-up pass: only these forks (by id) run, each continuing its own
   * conversation with this turn (`fixupPrompt`: the repository-wide check's output for its
   * files); every other fork stays as it ended, whatever its status.
   */
  fixups?: ReadonlyMap<string, LoopPrompt>;
}

/** A fan-out's check: the command template, its retries and its timeout. */
export interface FanOutCheck {
  command: string;
  /** Default 1. */
  retries?: number;
  /** Default `DEFAULT_CHECK_TIMEOUT_MS` (5 minutes); then the check counts as failed. */
  timeoutMs?: number;
}

/** The dispatch deps (`pool`, `agent`) and what the fan-out itself needs. */
export interface FanOutDeps extends DispatchDeps {
  options: ResolvedEngineOptions;
  /** Fork tasks in flight at most (threads × tasks per thread): the queue in front of the pool. */
  slots: LimitFunction;
  /** API requests in flight at most, shared by every fan-out of the engine. */
  api: LimitFunction;
  /** The engine's rate-limit admission (one budget for every fan-out and thread). */
  admission: AdmissionScheduler;
  /** The engine's spend cap in USD (`maxUsd`), shared by its fan-outs. */
  spendCap?: SpendCap | undefined;
  /** The model class of a model id (the catalogue's family: the API's rate-limit bucket). */
  modelClass(model: string): string;
  /** The engine's provider (its adapter): what a fork's request body is on its wire. */
  provider: ProviderAdapter;
  /** The engine's connection to its provider, with the fan-out's headers: the warm-up goes through it. */
  connection: ProviderConnection;
  ledger: UsageLedger;
  clock: Clock;
  rootId: string;
  runDir: string | undefined;
  onPermission: PermissionHandler | undefined;
  /** The engine's host tools with the fan-out's own. */
  hostTools: Readonly<Record<string, HostTool>>;
  /** Forks start in the foreground (their caller waits for them). */
  foreground?: boolean | undefined;
  /** Every fork must change a file (`FanOutOptions.requireChange`): in the summary. */
  requireChange?: boolean | undefined;
  /** Where bash really runs, when the forks may use it (the summary's `sandbox`). */
  sandbox?: SandboxReport | undefined;
  /** Whose tools the forks run, from the preflight (undefined: forkcache's own). */
  tools?: ForkTools | undefined;
  /** The fan-out's output schema (`FanOutOptions.outputSchema`), judging each fork's reports. */
  output?: OutputChecks | undefined;
  /** The distributed backend: forks run as BullMQ jobs on other hosts instead of the local pool. */
  remote?: { run(ctx: DispatchContext): Promise<ForkOutcome>; retryAfterStop?(modelClass: string): void } | undefined;
}

/** One fork of a fan-out: its directive, its base continuation, where it starts. */
export interface ForkSpec {
  directive: string;
  base: ForkChild;
  start: StartPoint;
  /** Set when a resumed fork needs no more requests. */
  finished?: ForkOutcome | undefined;
  /** The directive's fields (`file` …), when the plan gave some. */
  fields?: Readonly<Record<string, string>> | undefined;
  /** The plan's check of this fork, substituted. */
  check?: ForkCheckSpec | undefined;
  /** Judged for `no_change`: it has a target file, or the fan-out requires a change. */
  judgeChange?: boolean | undefined;
}

/** Fork ids are stable: the fan-out id and the fork's position (`fo001-ab12cd34-f03`). */
export function forkIdOf(fanOutId: string, index: number): string {
  return `${fanOutId}-f${String(index + 1).padStart(2, '0')}`;
}
