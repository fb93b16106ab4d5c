/**
 * One error class for the whole project. Callers switch on the stable string `code`, never on
 * `instanceof`: errors cross worker threads, where classes do not survive `structuredClone`.
 *
 * Codes are grouped by area. Adding a code is fine; renaming one breaks users. Every code
 * carries its exit class: `input` when the caller's input was wrong (the CLI exits 2),
 * `failure` when the work failed (exit 1). A new code has to say which. The CLI's other exit
 * codes are not errors' and live with their commands: 3 a spend cap (src/cli/output/budget-line.ts),
 * 4 some forks left out of an integration or a merge, 5 nothing merged (src/cli/exit-codes.ts),
 * 130 Ctrl-C (src/cli/interrupt.ts).
 */
const CODE_CLASSES = {
  // input validation at the edges, by what the user must fix (each names the field or flag in
  // `data.field`): an option or argument of the library API, or the environment it reads (an API
  // key, the job secret, Redis); a command-line flag or argument; a plan file; a run directory
  // (its files, or a run that cannot do what was asked of it). They were one code,
  // INVALID_ARGUMENT, until 0.7.0: see RETIRED_CODE_CLASSES.
  INVALID_OPTION: 'input',
  INVALID_FLAG: 'input',
  INVALID_PLAN: 'input',
  INVALID_RUN_DIR: 'input',
  SNAPSHOT_INVALID: 'input',
  // the model catalogue
  MODEL_CATALOGUE_INVALID: 'input',
  MODEL_RETIRED: 'input',
  // fork construction
  FORK_EMPTY_DIRECTIVE: 'input',
  FORK_DIRECTIVE_TOO_LARGE: 'input',
  FORK_DIRECTIVE_HAS_TAG: 'input',
  FORK_RECURSION: 'failure',
  // preflight: the parent declares a tool no executor runs, no host handler serves, and no one denied
  TOOLS_UNRUNNABLE: 'input',
  // the frozen prefix
  FORK_PREFIX_CORRUPT: 'failure',
  FORK_PREFIX_DRIFT: 'failure',
  // the fork loop and the engine
  FORK_MAX_TURNS: 'failure',
  FORK_CANCELLED: 'failure',
  FORK_API_ERROR: 'failure',
  // a turn kept failing for longer than its retry budget (turnRetry.budgetMs)
  FORK_RETRY_BUDGET: 'failure',
  FORK_MODEL_REFUSED: 'failure',
  // a failed fork whose conversation the API refused as too large (413): resume does not send it again
  FORK_REQUEST_TOO_LARGE: 'failure',
  // a fork that answered without doing its directive (src/core/util/fork-status.ts)
  FORK_NOT_DONE: 'failure',
  FORK_TRUNCATED: 'failure',
  FORK_CHECK_FAILED: 'failure',
  // a fork's report did not match the fan-out's output schema, after its repair turn (status invalid_output)
  FORK_INVALID_OUTPUT: 'failure',
  // a fork meant to change files reported done having changed none (status no_change)
  FORK_NO_CHANGE: 'failure',
  FORK_WORKER_FAILED: 'failure',
  ENGINE_CLOSED: 'failure',
  ENGINE_DESTROYED: 'failure',
  // rate limits: the API's spend cap stops admission (resume once it lifts); admission gave up
  RATE_LIMIT_SPEND_CAP: 'failure',
  // the client-side spend cap (`--max-usd`, `maxUsd`): admission stopped before the run could pass it
  SPEND_CAP_MAX_USD: 'failure',
  // emulator (server side)
  EMULATOR_INVALID_REQUEST: 'failure',
  EMULATOR_TOO_MANY_BREAKPOINTS: 'failure',
  EMULATOR_UNKNOWN_MODEL: 'failure',
  EMULATOR_SCRIPT: 'failure',
  EMULATOR_AUTHENTICATION: 'failure',
  EMULATOR_REQUEST_TOO_LARGE: 'failure',
  EMULATOR_NOT_FOUND: 'failure',
  EMULATOR_FAULT: 'failure',
  EMULATOR_REPLAY_MISMATCH: 'failure',
  EMULATOR_REPLAY_UNCONSUMED: 'failure',
  EMULATOR_INTERNAL: 'failure',
  EMULATOR_RATE_LIMITED: 'failure',
  // tools (model mistakes become error results with these codes; only TOOL_CONFIG_INVALID is thrown)
  TOOL_CONFIG_INVALID: 'failure',
  TOOL_UNKNOWN: 'failure',
  TOOL_NOT_ALLOWED: 'failure',
  TOOL_NOT_EXECUTABLE: 'failure',
  // a client's tool no fork runs on purpose (Claude Code's ScheduleWakeup, a `denyTools` entry)
  TOOL_NOT_IN_FORK: 'failure',
  TOOL_INPUT_INVALID: 'failure',
  TOOL_PATH_ESCAPE: 'failure',
  // inside the workspace, but `.git` or forkcache's run/state directory: no tool reaches it
  TOOL_PATH_PROTECTED: 'failure',
  TOOL_NOT_FOUND: 'failure',
  TOOL_FILE_TOO_LARGE: 'failure',
  TOOL_BINARY_FILE: 'failure',
  TOOL_BAD_PATTERN: 'failure',
  TOOL_EDIT_FAILED: 'failure',
  TOOL_EDIT_CONFLICT: 'failure',
  TOOL_TIMEOUT: 'failure',
  TOOL_IO_ERROR: 'failure',
  TOOL_COMMAND_FAILED: 'failure',
  // an embedder's host tool threw or returned an error result (src/core/tools/host-tools.ts)
  TOOL_HOST_FAILED: 'failure',
  PERMISSION_DENIED: 'failure',
  // host-side git (src/core/tools/git/git.ts): a git command failed; a fork's worktree no longer links
  // to the git dir forkcache made; `forkcache merge` met a dirty working tree (its conflicts are
  // reported, not thrown)
  GIT_FAILED: 'failure',
  GIT_WORKTREE_TAMPERED: 'failure',
  GIT_DIRTY_WORKTREE: 'input',
  // `forkcache push`: the remote branch moved on (a non-fast-forward) and no lease was given
  GIT_PUSH_REJECTED: 'failure',
  // a fork's worktree disk (src/core/tools/git/workspace-disk.ts) could not be made or mounted
  WORKSPACE_DISK_FAILED: 'failure',
  // usage/cost ledger
  LEDGER_INVALID_USAGE: 'failure',
  LEDGER_INVALID_RECORD: 'failure',
  LEDGER_INVALID_STATUS: 'failure',
  LEDGER_UNKNOWN_FORK: 'failure',
  // run directories: `resume` trusts only what this machine's forkcache signed (run-dir/run-trust.ts),
  // one writer at a time (run-dir/writer-lock.ts), and the key that signs them
  RUN_DIR_UNSIGNED: 'input',
  RUN_DIR_OTHER_KEY: 'input',
  RUN_DIR_TAMPERED: 'input',
  RUN_DIR_LOCKED: 'input',
  RUN_KEY_UNAVAILABLE: 'input',
  // no directory only this user can write for the per-file locks (tools/user-dir.ts)
  LOCK_DIR_UNSAFE: 'input',
  // a cost past 2^53 nano-dollars (about $9M): the figures are left out, never NaN
  LEDGER_COST_OVERFLOW: 'failure',
  // the distributed backend: a job refused by its host (unsigned, tampered, replayed; beyond
  // the host's own policy), Redis unreachable or emptied mid-run, Redis refusing the credentials
  JOB_SIGNATURE_INVALID: 'failure',
  JOB_POLICY_REFUSED: 'failure',
  JOB_REPLAYED: 'failure',
  REDIS_LOST: 'failure',
  REDIS_AUTH_FAILED: 'input',
  // cli
  CLI_USAGE: 'input',
  // an HTTP request outside a fork failed (`forkcache models` listing the API's models)
  API_ERROR: 'failure',
  // a client of the emulator or the proxy left while it was still sending its request
  HTTP_CLIENT_GONE: 'failure',
  // `proxy --mcp`: a fork tool call bound to no captured call, or to calls of more than one session
  MCP_CALL_UNSEEN: 'input',
  MCP_CALL_AMBIGUOUS: 'input',
  // reports (`forkcache report`): the message names the file, and the line for JSONL
  REPORT_FILE_MISSING: 'input',
  REPORT_FILE_INVALID: 'input',
  // importing a parent from a Claude Code transcript: the message names the line
  TRANSCRIPT_INVALID: 'input',
  // an optional peer dependency (echarts for reports, bullmq/ioredis for the distributed
  // backend) is not installed: the message says what to install
  DEPENDENCY_MISSING: 'failure',
  // anything else
  INTERNAL: 'failure',
} as const satisfies Record<string, ExitClass>;

/** What an error means for the command line: bad input (exit 2) or failed work (exit 1). */
type ExitClass = 'input' | 'failure';

export const ERROR_CODES = Object.freeze(Object.keys(CODE_CLASSES)) as readonly (keyof typeof CODE_CLASSES)[];

export type ErrorCode = keyof typeof CODE_CLASSES;

/**
 * Codes nothing throws any more that older forkcache versions wrote where this one still reads
 * errors: fork outcomes in run manifests and transcripts, a distributed host's failed job. Read
 * with their old exit class; never made (not an `ErrorCode`).
 */
const RETIRED_CODE_CLASSES = {
  // split by what the user must fix (0.7.0): INVALID_OPTION, INVALID_FLAG, INVALID_PLAN, INVALID_RUN_DIR
  INVALID_ARGUMENT: 'input',
} as const satisfies Record<string, ExitClass>;

/** True for a code this version throws, or one older versions wrote and this one still reads. */
export function isReadableCode(code: string): boolean {
  return Object.hasOwn(CODE_CLASSES, code) || Object.hasOwn(RETIRED_CODE_CLASSES, code);
}

/**
 * The exit class of a thrown value: its code's class for a forkcache error (from any copy or
 * thread: by the `code` field; a retired code's old class for one an older version wrote),
 * `failure` for anything else.
 */
export function exitClassOf(err: unknown): ExitClass {
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
  if (typeof code !== 'string') return 'failure';
  if (Object.hasOwn(CODE_CLASSES, code)) return CODE_CLASSES[code as ErrorCode];
  if (Object.hasOwn(RETIRED_CODE_CLASSES, code)) return RETIRED_CODE_CLASSES[code as keyof typeof RETIRED_CODE_CLASSES];
  return 'failure';
}

/** The shape an error takes on the wire between threads and processes. */
export interface WireError {
  code: string;
  message: string;
  data?: Record<string, unknown>;
}

/** Bad input naming what to fix: an option's path (`toolLimits.maxWorkspaceMb`), a flag, a plan field. */
export interface FieldData {
  field?: string;
}

/** A value a schema refused (src/core/util/validation.ts's `parseOrThrow`): each issue with its path. */
export interface IssuesData {
  issues: readonly { path: string; message: string }[];
}

/** A file that could not be read or parsed (json-file.ts, run-dir/jsonl.ts), with the line for JSONL. */
export interface FileData {
  path: string;
  line?: number;
  /** Where in the file, for a JSON value nothing downstream can use (runaway nesting, a lone surrogate). */
  field?: string;
}

/** The bad-input codes: a field, a schema's issues, or a file, by the helper that refused it. */
type InputData = FieldData | IssuesData | FileData | undefined;

/** A tool call's failure (src/core/tools/result.ts's `toolFailure`): what the tool knew of it. */
export interface ToolFailureData {
  /** The errno of a failed file operation (`ENOENT`, `EACCES`). */
  errno?: string;
  /** A command's exit code (null: killed by a signal). */
  exitCode?: number | null;
  /** Why an edit was refused: nothing to change, a conflict with a concurrent write, an ambiguous match. */
  reason?: string;
  occurrences?: number;
}

/**
 * What `data` holds for each code: `new ForkcacheError(code, message, { data })` is checked
 * against it, and after `isForkcacheError(err) && err.code === 'X'` `err.data` has X's shape.
 * `undefined` where a code may carry none. Derived from the throw sites; a new key goes here.
 */
export interface ErrorData {
  INVALID_OPTION:
    | (FieldData & { bytes?: number; model?: string; firstPriced?: string; fork?: string; missing?: string[] })
    | InputData;
  INVALID_FLAG: (FieldData & { flags?: string[] }) | InputData;
  INVALID_PLAN: InputData;
  INVALID_RUN_DIR: InputData;
  SNAPSHOT_INVALID: { path: string; markers?: string[] } | IssuesData | undefined;
  MODEL_CATALOGUE_INVALID: FieldData | FileData | undefined;
  MODEL_RETIRED: { model: string; field?: string; replacement?: string | null };
  FORK_EMPTY_DIRECTIVE: { field: string };
  FORK_DIRECTIVE_TOO_LARGE: { field: string; length: number; max: number };
  FORK_DIRECTIVE_HAS_TAG: { field: string };
  FORK_RECURSION: { querySource: string | null };
  TOOLS_UNRUNNABLE: { toolSet: string; tools?: string[] };
  // the frozen prefix's bytes (prefix/sab.ts) or the distributed prefix store's copy of them
  FORK_PREFIX_CORRUPT:
    | { sha256: string; key: string; headEnd?: unknown }
    | { expected: string; actual: string }
    | { version: number }
    | { byteLength: number }
    | undefined;
  FORK_PREFIX_DRIFT:
    | { prefixId: string; offset?: number; headBytes?: number; expected?: string; actual?: string }
    | { expected: string; actual: string }
    | { fork: number };
  FORK_MAX_TURNS: { maxTurns: number } | undefined;
  FORK_CANCELLED: { turn: number } | undefined;
  FORK_API_ERROR: { slot: number; action: string };
  FORK_RETRY_BUDGET: { turn: number; attempts: number; spentMs: number; budgetMs: number; last: WireError };
  FORK_MODEL_REFUSED: { turn: number };
  FORK_REQUEST_TOO_LARGE: undefined;
  // a fork's end that is not `completed` (src/core/loop/final-turn.ts): the turn it ended on
  FORK_NOT_DONE: ForkEndData;
  FORK_TRUNCATED: ForkEndData;
  FORK_CHECK_FAILED: ForkEndData & { exitCode?: number | null; attempts?: number };
  FORK_INVALID_OUTPUT: ForkEndData;
  FORK_NO_CHANGE: ForkEndData;
  FORK_WORKER_FAILED: undefined;
  ENGINE_CLOSED: undefined;
  ENGINE_DESTROYED: undefined;
  RATE_LIMIT_SPEND_CAP: { errorCode: string; modelClass: string };
  SPEND_CAP_MAX_USD: { maxUsd: number; spentUsd: number; nextBoundUsd: number };
  // the emulator's errors carry what its handlers put in them (the model, the fault) to its logs
  EMULATOR_INVALID_REQUEST: EmulatorData;
  EMULATOR_TOO_MANY_BREAKPOINTS: EmulatorData;
  EMULATOR_UNKNOWN_MODEL: EmulatorData;
  EMULATOR_SCRIPT: EmulatorData;
  EMULATOR_AUTHENTICATION: EmulatorData;
  EMULATOR_REQUEST_TOO_LARGE: EmulatorData;
  EMULATOR_NOT_FOUND: EmulatorData;
  EMULATOR_FAULT: EmulatorData;
  EMULATOR_REPLAY_MISMATCH: { source: string; call: number } | undefined;
  EMULATOR_REPLAY_UNCONSUMED: { remaining: number };
  EMULATOR_INTERNAL: EmulatorData;
  EMULATOR_RATE_LIMITED: EmulatorData;
  TOOL_CONFIG_INVALID: FieldData | IssuesData | undefined;
  TOOL_UNKNOWN: ToolFailureData | undefined;
  TOOL_NOT_ALLOWED: ToolFailureData | undefined;
  TOOL_NOT_EXECUTABLE: ToolFailureData | undefined;
  TOOL_NOT_IN_FORK: ToolFailureData | undefined;
  TOOL_INPUT_INVALID: ToolFailureData | IssuesData | undefined;
  TOOL_PATH_ESCAPE: ToolFailureData | undefined;
  TOOL_PATH_PROTECTED: ToolFailureData | undefined;
  TOOL_NOT_FOUND: ToolFailureData | undefined;
  TOOL_FILE_TOO_LARGE: ToolFailureData | undefined;
  TOOL_BINARY_FILE: ToolFailureData | undefined;
  TOOL_BAD_PATTERN: ToolFailureData | undefined;
  TOOL_EDIT_FAILED: ToolFailureData | undefined;
  TOOL_EDIT_CONFLICT: ToolFailureData | undefined;
  TOOL_TIMEOUT: ToolFailureData | undefined;
  TOOL_IO_ERROR: ToolFailureData | undefined;
  TOOL_COMMAND_FAILED: ToolFailureData | undefined;
  TOOL_HOST_FAILED: ToolFailureData | undefined;
  PERMISSION_DENIED: (ToolFailureData & FieldData) | undefined;
  GIT_FAILED: { args: string[]; code: number | null } | { branch: string; remote?: string };
  GIT_WORKTREE_TAMPERED: { path: string };
  GIT_DIRTY_WORKTREE: { files: string[] };
  GIT_PUSH_REJECTED: { remote: string; branch: string; tip?: string };
  WORKSPACE_DISK_FAILED: undefined;
  LEDGER_INVALID_USAGE: { field: string };
  LEDGER_INVALID_RECORD: { field: string };
  LEDGER_INVALID_STATUS: { field: string } | { forkId: string; from: string; to: string };
  LEDGER_UNKNOWN_FORK: { forkId: string };
  RUN_DIR_UNSIGNED: RunDirData;
  RUN_DIR_OTHER_KEY: RunDirData & { keyId: string | undefined };
  RUN_DIR_TAMPERED: RunDirData;
  RUN_DIR_LOCKED: { path: string; pid?: number; host?: string; command?: string; since?: string };
  RUN_KEY_UNAVAILABLE: { path: string };
  LOCK_DIR_UNSAFE: { field: string; path?: string };
  LEDGER_COST_OVERFLOW: undefined;
  JOB_SIGNATURE_INVALID: { jobId: string; kind: string; reason: string };
  JOB_POLICY_REFUSED: { field: string };
  JOB_REPLAYED: { jobId: string };
  REDIS_LOST: { redis: string; silentMs?: number } | undefined;
  REDIS_AUTH_FAILED: { field: string };
  CLI_USAGE: undefined;
  API_ERROR: undefined;
  HTTP_CLIENT_GONE: undefined;
  MCP_CALL_UNSEEN: undefined;
  MCP_CALL_AMBIGUOUS: { sessions: number };
  REPORT_FILE_MISSING: FileData | undefined;
  REPORT_FILE_INVALID: FileData | { file: string } | { where: string } | FieldData;
  TRANSCRIPT_INVALID: FileData | { file: string; line?: number | string; type?: string } | IssuesData | undefined;
  DEPENDENCY_MISSING: { feature: string; packages: string[] };
  /** `originalCode`: the code of a foreign error rebuilt by `fromWireError`. */
  INTERNAL: { originalCode?: string } | undefined;
}

/** The turn a fork ended on. */
type ForkEndData = { turn: number };

type EmulatorData = Readonly<Record<string, unknown>> | undefined;

/** Where a run directory's trust check failed (src/core/run-dir/run-trust.ts). */
interface RunDirData {
  path: string;
  /** The file (and line) that failed the check. */
  where: string;
}

/** The codes whose data can be `D` (the code a helper that adds `D` may be given). */
export type CodeWithData<D> = { [C in ErrorCode]: D extends ErrorData[C] ? C : never }[ErrorCode];

type ForkcacheErrorOptions<C extends ErrorCode = ErrorCode> = (undefined extends ErrorData[C]
  ? { data?: ErrorData[C] }
  : { data: ErrorData[C] }) & { cause?: unknown };

/** The options argument: optional when the code may carry no data. */
type OptionsArg<C extends ErrorCode> = undefined extends ErrorData[C]
  ? [options?: ForkcacheErrorOptions<C>]
  : [options: ForkcacheErrorOptions<C>];

/**
 * The brand of every ForkcacheError. `Symbol.for` gives the same symbol in every copy of the
 * package (two versions in one node_modules tree, a bundled copy), where `instanceof` fails.
 */
const BRAND = Symbol.for('forkcache.error');

export class ForkcacheError<C extends ErrorCode = ErrorCode> extends Error {
  override readonly name = 'ForkcacheError';
  readonly code: C;
  /** Frozen; `undefined` when the error was made without data (its shape per code: `ErrorData`). */
  readonly data: Readonly<ErrorData[C]>;

  constructor(code: C, message: string, ...[options]: OptionsArg<C>) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    const data = options?.data;
    this.data = (data === undefined ? undefined : Object.freeze({ ...data })) as Readonly<ErrorData[C]>;
  }

  toWire(): WireError {
    return { code: this.code, message: this.message, data: { ...this.data } };
  }
}

/**
 * A forkcache error whose `data` follows its `code`: `err.code === 'SPEND_CAP_MAX_USD'` narrows
 * `err.data` to that code's shape (what `isForkcacheError` gives).
 */
type AnyForkcacheError = { [C in ErrorCode]: ForkcacheError<C> }[ErrorCode];
Object.defineProperty(ForkcacheError.prototype, BRAND, { value: true });

/**
 * True when `err` is a ForkcacheError from any copy of forkcache (checked by a `Symbol.for`
 * brand, not `instanceof`), so `err.code` is one of `ERROR_CODES`.
 *
 * @example
 * try { engine.fanOut(snapshot, directives) } catch (err) {
 *   if (isForkcacheError(err) && err.code === 'FORK_EMPTY_DIRECTIVE') ...
 * }
 */
export function isForkcacheError(err: unknown): err is AnyForkcacheError {
  return typeof err === 'object' && err !== null && (err as Record<symbol, unknown>)[BRAND] === true;
}

/** True when `err` is a forkcache error (from any realm or thread, rebuilt or not). */
export function hasCode(err: unknown, code: ErrorCode): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === code;
}

/** Serialize any thrown value for `postMessage`. */
export function toWireError(err: unknown): WireError {
  if (err instanceof ForkcacheError) return err.toWire();
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return { code: typeof code === 'string' ? code : 'INTERNAL', message: err.message };
  }
  return { code: 'INTERNAL', message: String(err) };
}

/**
 * Rebuild an error that crossed a boundary as `{ code, message, data }`. Its data is trusted
 * to have its code's shape: it was made by this version of forkcache on the other side (a
 * worker); empty data is none (`undefined`), as before it crossed.
 */
export function fromWireError(wire: WireError): ForkcacheError {
  if (!Object.hasOwn(CODE_CLASSES, wire.code))
    return new ForkcacheError('INTERNAL', wire.message, { data: { ...wire.data, originalCode: wire.code } });
  const empty = wire.data === undefined || Object.keys(wire.data).length === 0;
  const options = (empty ? {} : { data: wire.data }) as ForkcacheErrorOptions;
  return new ForkcacheError(wire.code as ErrorCode, wire.message, options);
}
