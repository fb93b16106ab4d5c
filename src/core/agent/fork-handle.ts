import type { SandboxReport } from '../tools/sandbox/report.ts';
import type { ForkReport } from '../fork/report.ts';
import type { ForkStatus } from '../util/fork-status.ts';
import type { ForkOutcome, LoopEvent } from '../loop/types.ts';
import type { WorktreeResult } from '../tools/git/worktree.ts';
import type { LedgerSummary } from '../ledger/summary.ts';
import type { EngineFigures, EngineSlots } from '../ledger/engine-figures.ts';
import type { FrozenPrefix } from '../prefix/freeze.ts';

/** One fork's final result, as `settled()` and `handle.result` give it. */
export interface ForkResult extends ForkOutcome {
  forkId: string;
  index: number;
  directive: string;
  /**
   * The directive's fields when the plan gave some (`file` for a plan made from a glob):
   * substituted into the plan's check, and named in summaries.
   */
  fields?: Readonly<Record<string, string>> | undefined;
  /** Whether the fork shared a parent's prefix (`fallback`: there was no parent snapshot). */
  sharing: 'parent' | 'fallback';
  transcriptPath: string | undefined;
  /** Convenience: `report` is parsed from `finalText`. */
  report: ForkReport | undefined;
  /** With `isolation: 'worktree'`: the fork's branch, its commit and the diff stat. */
  worktree?: WorktreeResult;
  /**
   * With an output schema (`FanOutOptions.outputSchema`): the value of the fork's report, as
   * the schema's output (absent when no report matched: the fork ended `invalid_output`, or
   * before reporting).
   */
  output?: unknown;
}

/** Events of a fan-out, each naming its fork. Noun-verb names. */
export type FanOutEvent =
  | { type: 'fork-start'; forkId: string; at: number }
  | ({ forkId: string } & LoopEvent)
  /** The distributed backend: the host that runs (or took over) the fork. */
  | { type: 'fork-host'; forkId: string; at: number; hostId: string }
  /** The fork's worker died; it continues on a fresh worker from its transcript. */
  | { type: 'fork-restart'; forkId: string; at: number; attempt: number; turnsDone: number; interrupted: string[] }
  | { type: 'fork-end'; forkId: string; at: number; status: ForkResult['status']; result: ForkResult };

/** Read-only view of one fork; `cancel()` stops it (queued: at once; running: at its next step). */
export interface ForkHandle {
  /** The fork's id, as in its result (`ForkResult.forkId`), its events and `--json` (`fork_id`). */
  readonly forkId: string;
  readonly index: number;
  readonly directive: string;
  readonly status: ForkStatus;
  /** Turns finished so far, and the last tool used: what a progress display shows. */
  readonly turns: number;
  readonly lastTool: string | undefined;
  readonly result: Promise<ForkResult>;
  /**
   * `foreground`: the caller waits for the result; `background` (the default): the result
   * arrives later as a notification. Only a delivery choice: the fork itself never restarts.
   */
  readonly mode: 'foreground' | 'background';
  /** Move a foreground fork to the background now (no turn is lost: it keeps running). */
  background(): void;
  /** Resolves when the fork is moved to the background. */
  readonly backgrounded: Promise<void>;
  cancel(): void;
}

/** The JSON summary of a fan-out: the ledger's, plus the prefix and where the run lives. */
export interface FanOutSummary extends LedgerSummary {
  prefix: {
    id: string;
    sha256: string;
    bytes: number;
    approx_tokens: number;
    shared_tokens: number | null;
    drift_events: number;
    source: 'parent' | 'fallback';
  };
  warmups: number;
  run_dir: string | undefined;
  /**
   * Every fork in plan order, with how it ended: `summary.json` readers (status, review
   * commands, reports) need no transcript for that. `completed` is done, and `no_change` is
   * unless `require_change` (or every fork ended so); any other status is not done.
   */
  fork_results: ForkSummary[];
  /** Every fork had to change a file (`requireChange`): a `no_change` fork is not done. */
  require_change: boolean;
  /**
   * Where the forks' bash really ran and which protections held (`missing`: asked for, not
   * applicable on this machine); present when the forks could use bash.
   */
  sandbox?: SandboxReport | undefined;
  /**
   * Calls to tools no fork runs (Claude Code's ScheduleWakeup, a `denyTools` entry: code
   * `TOOL_NOT_IN_FORK`) and spawns refused by the recursion guard (`FORK_RECURSION`), by tool
   * name, in this pass of the run; present when there were any.
   */
  refused_tools?: Record<string, number> | undefined;
  /**
   * The distributed backend: each host's own report of where the forks' bash ran there (null:
   * it ran no command), by host id. The submitter's machine is not probed: its sandbox is not
   * the one the forks get.
   */
  host_sandboxes?: Record<string, SandboxReport | null> | undefined;
  /**
   * The client-side spend cap (`maxUsd`) when there is one: the cap, what it counted as spent
   * (at least what the ledger says), and whether it stopped admission (forks `capped`, error
   * `SPEND_CAP_MAX_USD`).
   */
  spend_cap: {
    max_usd: number;
    spent_usd: number;
    stopped: boolean;
    stopped_forks: number;
    /** When it stopped: the cap that should let the run finish (spent + the forks left at the done ones' average). */
    next_max_usd: number | null;
  } | null;
  /**
   * Rate limits met by this fan-out: 429s (of which ramp and spend-cap), 529s, and `stopped`
   * when the spend cap ended admission (the run is resumable once it lifts).
   */
  rate_limits: {
    admission: 'on' | 'off';
    http_429: number;
    http_529: number;
    ramp_limit_exceeded: number;
    spend_limit_reached: number;
    stopped: string | null;
  };
  /** On a local engine (llama-cpp, openai-compatible): its compute, not a price (src/core/ledger/engine-figures.ts). */
  engine?: (EngineFigures & { slots: EngineSlots | null }) | undefined;
}

/** One fork's line in the summary (snake_case like the rest of the JSON). */
export interface ForkSummary {
  /** The fork's id (`fo001-…-f01`), as `ForkResult.forkId`. */
  fork_id: string;
  status: ForkResult['status'];
  directive: string;
  /** The directive's fields (`file` …), when the plan gave some. */
  fields?: Readonly<Record<string, string>>;
  turns: number;
  files_changed: string[];
  error: { code: string; message: string } | null;
  /** The distributed backend: the host that ran it, the sandbox kind it applied (null: no command), what its ceilings clamped. */
  host?: { id: string; sandbox: 'bwrap' | 'none' | null; clamped: string[] };
  /** With an output schema: the value of the fork's report that matched it (`ForkResult.output`). */
  output?: unknown;
}

export interface FanOutResult {
  /** The fan-out's id (`fo001-…`): its run directory's name, `FanOut.id`. */
  fanOutId: string;
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
  /**
   * Resolves once the shared prefix is in the cache (the warm-up's or first child's response
   * has begun), or when the fan-out is over: a parent that waits for it before its own next
   * request reads the children's prefix instead of writing it a second time.
   */
  warm(): Promise<void>;
  /** Cancel every fork that has not finished. */
  cancel(): void;
}

/** The mutable state behind a handle; only the fan-out writes it. */
export class ForkState implements ForkHandle {
  readonly id: string;
  readonly index: number;
  readonly directive: string;
  status: ForkStatus = 'queued';
  turns = 0;
  lastTool: string | undefined;
  readonly result: Promise<ForkResult>;
  resolve!: (result: ForkResult) => void;
  /** The fork's result once it has one (it is finished exactly once). */
  final: ForkResult | undefined;
  /** Set by `cancel()`, even before the fork is dispatched. */
  cancelRequested = false;
  onCancel: () => void = () => {};
  mode: 'foreground' | 'background' = 'background';
  readonly #backgrounded: { promise: Promise<void>; resolve: () => void };

  constructor(id: string, index: number, directive: string) {
    this.id = id;
    this.index = index;
    this.directive = directive;
    this.result = new Promise<ForkResult>((resolve) => (this.resolve = resolve));
    let resolve!: () => void;
    const promise = new Promise<void>((r) => (resolve = r));
    this.#backgrounded = { promise, resolve };
  }

  /** Resolves when the fork is moved to the background. */
  get backgrounded(): Promise<void> {
    return this.#backgrounded.promise;
  }

  background(): void {
    if (this.mode === 'background') return;
    this.mode = 'background';
    this.#backgrounded.resolve();
  }

  get forkId(): string {
    return this.id;
  }

  cancel(): void {
    if (this.status !== 'queued' && this.status !== 'running') return;
    this.cancelRequested = true;
    this.onCancel();
  }

  /** The public view (handles must not expose the setters). */
  view(): ForkHandle {
    const state = this as ForkState;
    return {
      forkId: state.id,
      index: state.index,
      directive: state.directive,
      get status() {
        return state.status;
      },
      get turns() {
        return state.turns;
      },
      get lastTool() {
        return state.lastTool;
      },
      result: state.result,
      get mode() {
        return state.mode;
      },
      background: () => state.background(),
      backgrounded: state.backgrounded,
      cancel: () => state.cancel(),
    };
  }
}
