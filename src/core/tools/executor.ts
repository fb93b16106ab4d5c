import { z } from 'zod';
import path from 'node:path';
import { ForkcacheError } from '../util/errors.ts';
import { SPAWN_TOOL_NAME } from '../wire/fork-text.ts';
import { formatZodIssues, parseOrThrow } from '../util/validation.ts';
import type { ToolContext } from './context.ts';
import { WorkspaceJail } from './jail/jail.ts';
import { DEFAULT_TOOL_LIMITS, toolLimitsSchema, type ToolLimits } from './limits.ts';
import { EXECUTABLE_TOOL_NAMES, FILE_TOOL_NAMES, type ExecutableToolName } from '../wire/tool-names.ts';
import { fromFsError, isToolFailure, toolError, toolOk, type ToolResult } from './result.ts';
import { redactor } from './redact.ts';
import { resolveSandbox } from './sandbox/sandbox.ts';
import type { SandboxChoice, SandboxKind, SandboxOptions } from './sandbox/types.ts';
import { SeenVersions } from './files/versions.ts';
import { type ToolFlagOptions, type ToolFlags, toolFlagShape, toolFlagsOf } from './tool-flags.ts';
import { type CheckResult, runCheck } from './checks/run.ts';
import { CheckOutputs } from './checks/outputs.ts';
import { capResult, type HostToolSet } from './host-tools.ts';
import { refusalOf, TOOL_SETS } from './client-tools/registry.ts';
import { clientPaths } from './client-tools/paths.ts';
import { RUN } from './client-tools/handler.ts';
import { searchDeferred } from './client-tools/qwen-deferred.ts';
import { MAX_TOOL_INPUT_BYTES, oversizeInput, TurnBudget } from './call-bounds.ts';
import {
  decide,
  DENY_UNASKED,
  permissionPolicySchema,
  type PermissionAnswer,
  type PermissionPolicy,
} from './permissions.ts';
import { TOOL_SET_NAMES, type ClientTool, type ToolSet, type ToolSetName } from './client-tools/types.ts';

/**
 * Tools an embedder serves on the main thread (reached through the fork's port, host-tools.ts).
 * They win over built-in and client tools of the same name.
 */
export type HostTools = HostToolSet;

/** `network` and the other tool flags (tool-flags.ts) are options too, each off unless `true`. */
export interface ToolExecutorOptions extends ToolFlagOptions {
  /** The directory the fork works in; every path is resolved against its realpath. */
  readonly workspace: string;
  /**
   * Tools this fork may run (default: the file tools, `FILE_TOOL_NAMES`). `bash` runs only when
   * listed here. The spawn tool is never executed by the executor and may not be listed.
   */
  readonly allow?: readonly ExecutableToolName[] | undefined;
  /** Overrides of `DEFAULT_TOOL_LIMITS`. */
  readonly limits?: Partial<ToolLimits> | undefined;
  /** Environment for bash commands (default: PATH, HOME and LANG of this process, nothing else). */
  readonly bashEnv?: Readonly<Record<string, string>> | undefined;
  /** Where bash runs: `auto` (default) uses bubblewrap when it works here, see sandbox.ts. */
  readonly sandbox?: SandboxChoice | undefined;
  /**
   * Directories no tool may reach even when they lie inside the workspace, and that the bash
   * sandbox hides: the engine passes its run directory and forkcache's state directory. `.git`
   * is always out of reach (protected-paths.ts).
   */
  readonly protect?: readonly string[] | undefined;
  /**
   * Host directories bash's sandbox shows read-only at their own absolute path (an integration
   * check's dependency folders); bubblewrap only: without a sandbox a command reaches what the
   * user can.
   */
  readonly readOnly?: readonly string[] | undefined;
  /**
   * Secrets removed from every tool result (the API key, configured secrets): a command may
   * still find one (a `.env` file, another process's environment); the model never sees it.
   */
  readonly secrets?: readonly string[] | undefined;
  /**
   * Whose tools the fork runs (default `forkcache`): the parent's declared array decides it
   * (src/core/tools/preflight.ts). A client's tools run on forkcache's executors, each needing the
   * capability (`allow`, permissions) of the forkcache tool it maps onto.
   */
  readonly toolSet?: ToolSetName | undefined;
  /**
   * The client's working directory (Claude Code's "Primary working directory"): its absolute
   * paths under it name the same files under the workspace. Other absolute paths are refused.
   */
  readonly clientRoot?: string | undefined;
  /** Tools refused in this fork on purpose (`denyTools`), whatever the tool set runs. */
  readonly deny?: readonly string[] | undefined;
  /**
   * An embedder's tools, run on the main thread (host-tools.ts); they win over every other tool
   * of the name, and their results are redacted and held to `maxReadBytes` like every other.
   */
  readonly host?: HostTools | undefined;
  /**
   * The permission policy every call passes (by whatever route: direct, `tool_call`, host
   * tool, a rerun on resume), named in forkcache's capability terms (`bash` covers Claude
   * Code's `Bash`) or by a host tool's name. Default: everything allowed.
   */
  readonly permissions?: PermissionPolicy | undefined;
  /** Who answers the policy's `ask` (default: nobody, so no). */
  readonly ask?: PermissionAsker | undefined;
}

/** How the plan's check runs: its timeout, and whether to tell what it wrote (src/core/tools/checks/outputs.ts). */
export interface CheckOptions extends ExecuteOptions {
  readonly timeoutMs: number;
  /**
   * Snapshot the workspace around the check and return in `outputs` what the checks created
   * (a worktree's commit leaves it out). Off in a shared workspace: nothing is committed there.
   */
  readonly trackOutputs?: boolean | undefined;
}

export interface ExecuteOptions {
  /** Checked before the call starts and between steps; an abort rejects with its reason. */
  readonly signal?: AbortSignal | undefined;
  /** The model's id of the call (host tools receive it). */
  readonly toolUseId?: string | undefined;
  /** The turn the call belongs to: the results of one turn share one size budget. */
  readonly turn?: number | undefined;
  /**
   * A call a stop interrupted, run again on resume: it runs only when the policy allows it
   * outright (nobody is asked again for a call made before); otherwise PERMISSION_DENIED.
   */
  readonly rerun?: boolean | undefined;
}

/** Who answers the policy's `ask` (the worker asks the main thread); default: nobody, so no. */
export type PermissionAsker = (tool: string, input: unknown) => Promise<PermissionAnswer>;

/** Runs tool calls of one fork inside its workspace. */
export interface ToolExecutor {
  /** The workspace realpath. */
  readonly workspace: string;
  readonly allowed: readonly ExecutableToolName[];
  readonly limits: Readonly<ToolLimits>;
  /** Where this fork's bash runs (`none` when bash is not allowed or no sandbox works here). */
  readonly sandbox: SandboxKind;
  /** Whose tools this fork runs. */
  readonly toolSet: ToolSetName;
  /** The tool flags this executor's tools read (every one, off unless its option was `true`). */
  readonly flags: Readonly<ToolFlags>;
  /** Whether the call may run: its capability is allowed (`input`: Qwen Code's `tool_call` names the tool there). */
  isAllowed(name: string, input?: unknown): boolean;
  /** The forkcache capability a call of this fork's set needs (`Bash` → `bash`); undefined for others. */
  capabilityOf(name: string, input?: unknown): ExecutableToolName | undefined;
  /** The set's spawn tool (`agent`, Claude Code's `Agent`): the loop's recursion guard answers it. */
  isSpawnTool(name: string): boolean;
  /**
   * Run one tool call. Model mistakes (unknown or refused tool, bad input, missing file, path
   * outside the workspace...) resolve to `{ isError: true, code, content }`; the promise
   * rejects only on abort (with the signal's reason) and on bugs.
   */
  execute(name: string, input: unknown, options?: ExecuteOptions): Promise<ToolResult>;
  /**
   * Run a plan's check command in the workspace the way `bash` runs commands (the sandbox of
   * the executor's `sandbox` choice, whether or not this fork may use bash), output redacted.
   */
  check(command: string, options: CheckOptions): Promise<CheckResult>;
}

/** Tools that change files (see the deadline in `execute`). */
const WRITES: ReadonlySet<string> = new Set(['edit_file', 'write_file']);

const optionsSchema = z.strictObject({
  workspace: z.string().min(1, 'expected a directory path'),
  allow: z.array(z.enum(EXECUTABLE_TOOL_NAMES)).optional(),
  limits: toolLimitsSchema.optional(),
  bashEnv: z.record(z.string(), z.string()).optional(),
  sandbox: z.enum(['auto', 'bwrap', 'none']).optional(),
  ...toolFlagShape(() => z.boolean().optional()),
  protect: z.array(z.string().min(1)).optional(),
  readOnly: z.array(z.string().refine((p) => path.isAbsolute(p), 'expected an absolute path')).optional(),
  secrets: z.array(z.string()).optional(),
  toolSet: z.enum(TOOL_SET_NAMES).optional(),
  clientRoot: z.string().min(1).optional(),
  deny: z.array(z.string()).optional(),
  permissions: permissionPolicySchema.optional(),
  ask: z.custom<PermissionAsker>((v) => typeof v === 'function', 'expected a function').optional(),
  host: z
    .custom<HostTools>(
      (v) => typeof v === 'object' && v !== null && 'call' in v && 'has' in v,
      'expected a HostToolSet',
    )
    .optional(),
});

const deferredSearchInput = z.strictObject({
  query: z.string().min(1, 'expected a query'),
  max_results: z.number().int().min(1).max(20).optional(),
});
const deferredCallInput = z.strictObject({
  name: z.string().min(1, 'expected a tool name'),
  arguments: z.record(z.string(), z.unknown()),
});

/** The default asker: nobody can be asked, so `ask` means no. */
const askNobody: PermissionAsker = async (tool, input) => {
  const answer = await DENY_UNASKED({ forkId: '', tool, input });
  return typeof answer === 'boolean' ? { allow: answer } : answer;
};

function defaultBashEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of ['PATH', 'HOME', 'LANG'] as const) {
    const value = process.env[key];
    if (value !== undefined) env[key] = value;
  }
  return env;
}

/**
 * Where a call goes once its name (and a deferred `tool_call`'s inner name) is resolved: a
 * host tool, one of the set's tools, the deferred search, or a refusal already written.
 */
type Route =
  | { readonly kind: 'host'; readonly name: string; readonly input: unknown }
  | { readonly kind: 'tool'; readonly tool: ClientTool; readonly input: unknown }
  | { readonly kind: 'search'; readonly input: unknown }
  | { readonly kind: 'refused'; readonly result: ToolResult };

/**
 * The gate: every call of a fork, whatever its tool set or route, passes `execute` in this
 * order: the deny list and the allowlist (`#route`), the permission policy (host tools too),
 * input validation with a size bound, the run under a deadline, the result bounds per call and
 * per turn, redaction. A tool set only declares its tools (client-tools/); nothing else calls a
 * tool's `run` or a host tool's handler (the worker's host set is a port round trip this gate
 * makes). Tools whose work is CPU-bound are bounded by construction (RE2 for patterns, the glob
 * parser's limits, an edit's size checked before it is built): a deadline cannot stop code
 * running on the fork's own thread.
 */
class ForkToolExecutor implements ToolExecutor {
  readonly allowed: readonly ExecutableToolName[];
  readonly limits: Readonly<ToolLimits>;
  readonly flags: Readonly<ToolFlags>;
  readonly #jail: WorkspaceJail;
  readonly #allowed: ReadonlySet<string>;
  readonly #bashEnv: Readonly<Record<string, string>>;
  readonly #seen = new SeenVersions();
  readonly #redact: (text: string) => string;
  readonly #sandboxOptions: SandboxOptions;
  readonly sandbox: SandboxKind;
  readonly #sandboxChoice: SandboxChoice;
  #checkSandbox: SandboxKind | undefined;
  #checkOutputs: CheckOutputs | undefined;
  readonly #set: ToolSet;
  readonly #deny: ReadonlySet<string>;
  readonly #host: HostTools | undefined;
  readonly #clientRoot: string | undefined;
  readonly #policy: PermissionPolicy;
  readonly #ask: PermissionAsker;
  readonly #budget: TurnBudget;

  constructor(
    jail: WorkspaceJail,
    allowed: readonly ExecutableToolName[],
    limits: ToolLimits,
    bashEnv: Record<string, string>,
    extra: {
      sandbox: SandboxKind;
      sandboxChoice: SandboxChoice;
      secrets: readonly string[];
      flags: ToolFlags;
      readOnly: readonly string[];
      toolSet: ToolSetName;
      clientRoot: string | undefined;
      deny: readonly string[];
      host: HostTools | undefined;
      permissions: PermissionPolicy;
      ask: PermissionAsker;
    },
  ) {
    this.#set = TOOL_SETS[extra.toolSet];
    this.#deny = new Set(extra.deny);
    this.#host = extra.host;
    this.#clientRoot = extra.clientRoot;
    this.#policy = extra.permissions;
    this.#ask = extra.ask;
    this.#jail = jail;
    this.sandbox = extra.sandbox;
    this.#sandboxChoice = extra.sandboxChoice;
    this.flags = Object.freeze({ ...extra.flags });
    this.#sandboxOptions = Object.freeze({
      network: extra.flags.network,
      hide: jail.protected.dirs,
      readOnly: extra.readOnly,
      limits,
    });
    this.#redact = redactor(extra.secrets);
    this.allowed = Object.freeze([...new Set(allowed)]);
    this.#allowed = new Set(allowed);
    this.limits = Object.freeze(limits);
    this.#bashEnv = Object.freeze(bashEnv);
    this.#budget = new TurnBudget(this.limits);
  }

  get workspace(): string {
    return this.#jail.root;
  }

  get toolSet(): ToolSetName {
    return this.#set.name;
  }

  // Arrow properties, bound at construction: a wrapper made with Object.create(executor)
  // (tests, embedders adding a hook) still reaches this executor's private state through them.
  readonly isAllowed = (name: string, input?: unknown): boolean => {
    const route = this.#route(name, input);
    return route.kind === 'host' || route.kind === 'tool';
  };

  readonly capabilityOf = (name: string, input?: unknown): ExecutableToolName | undefined => {
    if (this.#deny.has(name) || this.#host?.has(name)) return undefined;
    const inner = this.#deferredTarget(name, input);
    if (inner !== undefined) return inner === this.#set.deferred?.call ? undefined : this.capabilityOf(inner);
    return this.#set.tools.get(name)?.capability;
  };

  /** The tool a deferred call (`tool_call {name}`) names, if this is one. */
  #deferredTarget(name: string, input: unknown): string | undefined {
    if (name !== this.#set.deferred?.call) return undefined;
    const inner = (input as { name?: unknown } | null)?.name;
    return typeof inner === 'string' ? inner : '';
  }

  readonly isSpawnTool = (name: string): boolean =>
    !this.#host?.has(name) && !this.#deny.has(name) && this.#set.spawn.includes(name);

  /** The names of the set's tools this fork may run, for the model's "use these instead". */
  #usable(): string[] {
    return [...this.#set.tools.values()]
      .filter((t) => this.#allowed.has(t.capability) && !this.#deny.has(t.name))
      .map((t) => t.name);
  }

  async execute(name: string, input: unknown, options: ExecuteOptions = {}): Promise<ToolResult> {
    const result = await this.#gate(name, input, options);
    // bounded before redaction: a secret cut in half by the bound would no longer be found
    return { ...result, content: this.#budget.take(this.#redact(result.content), options.turn) };
  }

  async check(command: string, options: CheckOptions): Promise<CheckResult> {
    options.signal?.throwIfAborted();
    const sandbox = (this.#checkSandbox ??= this.allowed.includes('bash')
      ? this.sandbox
      : resolveSandbox(this.#sandboxChoice));
    if (options.trackOutputs) {
      this.#checkOutputs ??= new CheckOutputs(this.#jail.root, this.#jail.protected);
      const { result, outputs } = await this.#checkOutputs.around(() => this.#check(command, options, sandbox));
      return outputs.length > 0 ? { ...result, outputs } : result;
    }
    return this.#check(command, options, sandbox);
  }

  async #check(command: string, options: CheckOptions, sandbox: SandboxKind): Promise<CheckResult> {
    const result = await runCheck(command, {
      jail: this.#jail,
      limits: { ...this.limits, bashTimeoutMs: options.timeoutMs },
      signal: options.signal,
      bashEnv: this.#bashEnv,
      seen: this.#seen,
      sandbox,
      flags: this.flags,
      sandboxOptions: { ...this.#sandboxOptions, limits: { ...this.limits, bashTimeoutMs: options.timeoutMs } },
    });
    return { ...result, output: this.#redact(result.output) };
  }

  async #gate(name: string, input: unknown, options: ExecuteOptions): Promise<ToolResult> {
    const { signal } = options;
    signal?.throwIfAborted();
    const route = this.#route(name, input);
    if (route.kind === 'refused') return route.result;
    if (route.kind === 'search') return this.#search(route.input);
    // the policy speaks of capabilities (`bash` covers Claude Code's `Bash`) and host tools' own names
    const subject = route.kind === 'host' ? route.name : route.tool.capability;
    const refusal = await this.#permit(subject, name, route.input, options);
    if (refusal !== undefined) return refusal;
    signal?.throwIfAborted();
    const size = oversizeInput(route.input, MAX_TOOL_INPUT_BYTES);
    if (size !== undefined)
      return toolError(
        'TOOL_INPUT_INVALID',
        `${name}: the input is ${size} bytes, over the limit of ${MAX_TOOL_INPUT_BYTES}; send less at once`,
      );
    if (route.kind === 'tool') return this.#run(route.tool, route.input, signal);
    const result = await this.#host!.call(route.name, route.input, {
      ...(signal ? { signal } : {}),
      toolUseId: options.toolUseId ?? '',
    });
    return { ...result, content: capResult(result.content, this.limits.maxReadBytes) };
  }

  /** The deny list, the host's tools, the deferred route and the allowlist: where `name` goes, or why not. */
  #route(name: string, input: unknown, via?: string): Route {
    // denied first: a denied name is refused whatever else answers to it (a host tool, a deferred call)
    if (this.#deny.has(name)) return { kind: 'refused', result: this.#notRun(name) };
    if (this.#host?.has(name)) return { kind: 'host', name, input };
    const deferred = this.#set.deferred;
    if (via === undefined && name === deferred?.search) return { kind: 'search', input };
    if (name === deferred?.call || name === deferred?.search) {
      if (via !== undefined)
        return {
          kind: 'refused',
          result: toolError('TOOL_INPUT_INVALID', `${via}: call ${name} directly, not through ${via}`),
        };
      const parsed = deferredCallInput.safeParse(input);
      if (!parsed.success)
        return {
          kind: 'refused',
          result: toolError('TOOL_INPUT_INVALID', formatZodIssues(parsed.error.issues, name)),
        };
      return this.#route(parsed.data.name, parsed.data.arguments, name);
    }
    const tool = this.#set.tools.get(name);
    if (tool === undefined) return { kind: 'refused', result: this.#notRun(name) };
    if (!this.#allowed.has(tool.capability)) {
      const why = tool.name === tool.capability ? '' : ` (it needs ${tool.capability})`;
      return {
        kind: 'refused',
        result: toolError(
          'TOOL_NOT_ALLOWED',
          `tool ${name} is not allowed for this fork${why}; it may use: ${this.#usable().join(', ')}`,
        ),
      };
    }
    return { kind: 'tool', tool, input };
  }

  /** The permission policy's answer for `subject`: undefined when the call may run, else the refusal. */
  async #permit(
    subject: string,
    called: string,
    input: unknown,
    options: ExecuteOptions,
  ): Promise<ToolResult | undefined> {
    const decision = decide(this.#policy, subject);
    if (decision === 'allow') return undefined;
    let answer: PermissionAnswer;
    if (decision === 'deny') answer = { allow: false, reason: 'denied by the permission policy' };
    else if (options.rerun === true)
      answer = { allow: false, reason: 'the policy says ask, and a resumed call is not asked again' };
    else answer = await this.#ask(subject, input);
    if (answer.allow) return undefined;
    return toolError(
      'PERMISSION_DENIED',
      `Permission denied for ${called}${answer.reason ? `: ${answer.reason}` : ''}. Do without it, or report that it is needed.`,
    );
  }

  #search(input: unknown): ToolResult {
    const parsed = deferredSearchInput.safeParse(input);
    if (!parsed.success) return toolError('TOOL_INPUT_INVALID', formatZodIssues(parsed.error.issues, 'tool_search'));
    const runnable = (n: string): boolean => this.#route(n, undefined, 'tool_search').kind === 'tool';
    return toolOk(searchDeferred(parsed.data.query, parsed.data.max_results ?? 5, runnable));
  }

  #notRun(name: string): ToolResult {
    if (this.#set.spawn.includes(name) && !this.#deny.has(name)) {
      return toolError(
        'TOOL_NOT_EXECUTABLE',
        `tool ${name} is not executable here: spawning forks is handled by the fork engine`,
      );
    }
    const why = this.#deny.has(name) ? 'it is denied for this run' : refusalOf(this.#set, name);
    if (why !== undefined) {
      return toolError(
        'TOOL_NOT_IN_FORK',
        `${name} is not available in a fork: ${why}. This fork may use: ${this.#usable().join(', ')}`,
      );
    }
    return toolError(
      'TOOL_UNKNOWN',
      `unknown tool ${JSON.stringify(name)}; this fork may use: ${this.#usable().join(', ')}`,
    );
  }

  async #run(tool: ClientTool, input: unknown, signal: AbortSignal | undefined): Promise<ToolResult> {
    const name = tool.name;
    const parsed = tool.input.safeParse(input);
    if (!parsed.success) return toolError('TOOL_INPUT_INVALID', formatZodIssues(parsed.error.issues, name));
    // bash has its own timeout (it kills the process group); every other tool gets this one.
    const deadline = tool.capability === 'bash' ? undefined : AbortSignal.timeout(this.limits.toolTimeoutMs);
    const callSignal =
      deadline === undefined ? signal : signal === undefined ? deadline : AbortSignal.any([signal, deadline]);
    const ctx: ToolContext = {
      jail: this.#jail,
      limits: this.limits,
      signal: callSignal,
      bashEnv: this.#bashEnv,
      seen: this.#seen,
      sandbox: this.sandbox,
      flags: this.flags,
      sandboxOptions: this.#sandboxOptions,
    };
    try {
      const io = clientPaths(ctx, this.#clientRoot);
      // A write is awaited to its end: it stops at its own checkpoints, and reporting a timeout
      // for an edit that then lands would tell the model a lie. Reads return at once.
      const work = (tool[RUN] as (input: unknown, io: ReturnType<typeof clientPaths>) => Promise<string>)(
        parsed.data,
        io,
      );
      return toolOk(await (WRITES.has(tool.capability) ? work : untilAborted(work, callSignal)));
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      if (deadline?.aborted) {
        return toolError(
          'TOOL_TIMEOUT',
          `${name} did not finish within ${this.limits.toolTimeoutMs} ms and was stopped; narrow the path, glob or pattern`,
        );
      }
      // fs errors that escaped a tool's own mapping still name the path the model gave.
      const failure = isToolFailure(err) ? err : fromFsError(err, displayPath(parsed.data as object));
      if (isToolFailure(failure)) return toolError(failure.code, failure.message);
      throw err;
    }
  }
}

/**
 * The tool's promise, or the signal's reason as soon as it aborts: a cancelled or timed-out
 * call returns now, not when the tool next looks at its signal (it stops there on its own).
 */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return work;
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

function displayPath(input: object): string {
  const value = (input as { path?: unknown; file_path?: unknown }).path ?? (input as { file_path?: unknown }).file_path;
  return typeof value === 'string' ? value : '.';
}

/**
 * Build the executor of one fork. Throws TOOL_CONFIG_INVALID for a bad configuration (a
 * missing workspace, an unknown tool in `allow`, a non-positive limit) — those are bugs of the
 * caller, unlike the model's mistakes, which come back as error results.
 *
 * @example
 * const tools = createToolExecutor({ workspace: dir, allow: ['read_file', 'grep'] });
 * const result = await tools.execute('read_file', { path: 'README.md' }, { signal });
 * // { isError: false, content: '# forkcache\n...' }
 */
export function createToolExecutor(options: ToolExecutorOptions): ToolExecutor {
  if ((options.allow as readonly string[] | undefined)?.includes(SPAWN_TOOL_NAME)) {
    throw new ForkcacheError(
      'TOOL_CONFIG_INVALID',
      `createToolExecutor: allow may not list ${SPAWN_TOOL_NAME}; it stays declared, and the engine handles spawns`,
    );
  }
  const parsed = parseOrThrow(optionsSchema, options, 'TOOL_CONFIG_INVALID', 'createToolExecutor');
  // An explicit `undefined` means "the default", not "no limit".
  const overrides = Object.entries(parsed.limits ?? {}).filter(([, value]) => value !== undefined);
  const limits: ToolLimits = { ...DEFAULT_TOOL_LIMITS, ...(Object.fromEntries(overrides) as Partial<ToolLimits>) };
  const allow = parsed.allow ?? FILE_TOOL_NAMES;
  // probing for bubblewrap runs a process: only for forks that may use bash
  const sandbox = (allow as readonly string[]).includes('bash') ? resolveSandbox(parsed.sandbox ?? 'auto') : 'none';
  const jail = new WorkspaceJail(parsed.workspace, parsed.protect ?? []);
  return new ForkToolExecutor(jail, allow, limits, parsed.bashEnv ?? defaultBashEnv(), {
    sandbox,
    sandboxChoice: parsed.sandbox ?? 'auto',
    secrets: parsed.secrets ?? [],
    flags: toolFlagsOf(parsed),
    readOnly: parsed.readOnly ?? [],
    toolSet: parsed.toolSet ?? 'forkcache',
    clientRoot: parsed.clientRoot,
    deny: parsed.deny ?? [],
    host: parsed.host,
    permissions: (parsed.permissions ?? {}) as PermissionPolicy,
    ask: parsed.ask ?? askNobody,
  });
}
