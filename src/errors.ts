/**
 * One error class for the whole project. Callers switch on the stable string `code`, never on
 * `instanceof`: errors cross worker threads, where classes do not survive `structuredClone`.
 *
 * Codes are grouped by area. Adding a code is fine; renaming one breaks users.
 */
export const ERROR_CODES = [
  // input validation at the edges
  'INVALID_ARGUMENT',
  'SNAPSHOT_INVALID',
  // the model catalogue
  'MODEL_CATALOGUE_INVALID',
  'MODEL_RETIRED',
  // fork construction
  'FORK_EMPTY_DIRECTIVE',
  'FORK_DIRECTIVE_TOO_LARGE',
  'FORK_DIRECTIVE_HAS_TAG',
  'FORK_RECURSION',
  'FORK_NOT_ALLOWED',
  'FORK_TOO_MANY_BREAKPOINTS',
  // the frozen prefix
  'FORK_PREFIX_CORRUPT',
  'FORK_PREFIX_DRIFT',
  // the fork loop and the engine
  'FORK_MAX_TURNS',
  'FORK_CANCELLED',
  'FORK_API_ERROR',
  // a turn kept failing for longer than its retry budget (turnRetry.budgetMs)
  'FORK_RETRY_BUDGET',
  'FORK_MODEL_REFUSED',
  // a fork that answered without doing its directive (src/fork-status.ts)
  'FORK_NOT_DONE',
  'FORK_TRUNCATED',
  'FORK_CHECK_FAILED',
  // a fork meant to change files reported done having changed none
  'FORK_NO_CHANGE',
  // the client-side spend cap admitted no more of this fork's turns (status `capped`)
  'FORK_CAPPED',
  'FORK_WORKER_FAILED',
  'ENGINE_CLOSED',
  'ENGINE_DESTROYED',
  // rate limits: the API's spend cap stops admission (resume once it lifts); admission gave up
  'RATE_LIMIT_SPEND_CAP',
  'RATE_LIMIT_GAVE_UP',
  // the client-side spend cap (`--max-usd`, `maxUsd`): admission stopped before the run could pass it
  'SPEND_CAP_MAX_USD',
  // emulator (server side)
  'EMULATOR_INVALID_REQUEST',
  'EMULATOR_TOO_MANY_BREAKPOINTS',
  'EMULATOR_UNKNOWN_MODEL',
  'EMULATOR_SCRIPT',
  'EMULATOR_AUTHENTICATION',
  'EMULATOR_REQUEST_TOO_LARGE',
  'EMULATOR_NOT_FOUND',
  'EMULATOR_FAULT',
  'EMULATOR_REPLAY_MISMATCH',
  'EMULATOR_REPLAY_UNCONSUMED',
  'EMULATOR_INTERNAL',
  'EMULATOR_RATE_LIMITED',
  // tools (model mistakes become error results with these codes; only TOOL_CONFIG_INVALID is thrown)
  'TOOL_CONFIG_INVALID',
  'TOOL_UNKNOWN',
  'TOOL_NOT_ALLOWED',
  'TOOL_NOT_EXECUTABLE',
  'TOOL_INPUT_INVALID',
  'TOOL_PATH_ESCAPE',
  // inside the workspace, but `.git` or forkcache's run/state directory: no tool reaches it
  'TOOL_PATH_PROTECTED',
  'TOOL_NOT_FOUND',
  'TOOL_FILE_TOO_LARGE',
  'TOOL_BINARY_FILE',
  'TOOL_BAD_PATTERN',
  'TOOL_EDIT_FAILED',
  'TOOL_EDIT_CONFLICT',
  'TOOL_TIMEOUT',
  'TOOL_IO_ERROR',
  'TOOL_COMMAND_FAILED',
  'PERMISSION_DENIED',
  // host-side git (src/tools/git.ts): a git command failed; a fork's worktree no longer links
  // to the git dir forkcache made; `forkcache merge` met a conflict or a dirty working tree
  'GIT_FAILED',
  'GIT_WORKTREE_TAMPERED',
  'GIT_MERGE_CONFLICT',
  'GIT_DIRTY_WORKTREE',
  // usage/cost ledger
  'LEDGER_INVALID_USAGE',
  'LEDGER_INVALID_RECORD',
  'LEDGER_INVALID_STATUS',
  'LEDGER_UNKNOWN_FORK',
  // run directories: `resume` trusts only what this machine's forkcache signed (run-dir/run-trust.ts),
  // one writer at a time (run-dir/writer-lock.ts), and the key that signs them
  'RUN_DIR_UNSIGNED',
  'RUN_DIR_OTHER_KEY',
  'RUN_DIR_TAMPERED',
  'RUN_DIR_LOCKED',
  'RUN_KEY_UNAVAILABLE',
  // a cost past 2^53 nano-dollars (about $9M): the figures are left out, never NaN
  'LEDGER_COST_OVERFLOW',
  // the distributed backend: a job refused by its host (unsigned, tampered, replayed; beyond
  // the host's own policy), Redis unreachable or emptied mid-run, Redis refusing the credentials
  'JOB_SIGNATURE_INVALID',
  'JOB_POLICY_REFUSED',
  'REDIS_LOST',
  'REDIS_AUTH_FAILED',
  // cli
  'CLI_USAGE',
  // reports (`forkcache report`): the message names the file, and the line for JSONL
  'REPORT_FILE_MISSING',
  'REPORT_FILE_INVALID',
  // importing a parent from a Claude Code transcript: the message names the line
  'TRANSCRIPT_INVALID',
  // an optional peer dependency (echarts for reports, bullmq/ioredis for the distributed
  // backend) is not installed: the message says what to install
  'DEPENDENCY_MISSING',
  // anything else
  'INTERNAL',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** The shape an error takes on the wire between threads and processes. */
export interface WireError {
  code: string;
  message: string;
  data?: Record<string, unknown>;
}

export interface ForkcacheErrorOptions {
  data?: Record<string, unknown>;
  cause?: unknown;
}

/**
 * The brand of every ForkcacheError. `Symbol.for` gives the same symbol in every copy of the
 * package (two versions in one node_modules tree, a bundled copy), where `instanceof` fails.
 */
const BRAND = Symbol.for('forkcache.error');

export class ForkcacheError extends Error {
  override readonly name = 'ForkcacheError';
  readonly code: ErrorCode;
  readonly data: Readonly<Record<string, unknown>>;

  constructor(code: ErrorCode, message: string, options: ForkcacheErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.data = Object.freeze({ ...options.data });
  }

  toWire(): WireError {
    return { code: this.code, message: this.message, data: { ...this.data } };
  }
}
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
export function isForkcacheError(err: unknown): err is ForkcacheError {
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

/** Rebuild an error that crossed a boundary as `{ code, message, data }`. */
export function fromWireError(wire: WireError): ForkcacheError {
  const known = (ERROR_CODES as readonly string[]).includes(wire.code);
  const code = known ? (wire.code as ErrorCode) : 'INTERNAL';
  const data = known ? wire.data : { ...wire.data, originalCode: wire.code };
  return new ForkcacheError(code, wire.message, data === undefined ? {} : { data });
}
