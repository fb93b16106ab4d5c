import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import type Anthropic from '@anthropic-ai/sdk';
import { z } from 'zod';
import type { Clock } from '../util/clock.ts';
import type { ModelCatalogue } from '../models/catalogue.ts';
import { DEFAULT_TURN_RETRY, type TurnRetryOptions } from '../loop/retry.ts';
import type { ApiEndpoint } from '../loop/transport.ts';
import { DEFAULT_RETRY_AFTER, retryAfterOptionsSchema, type RetryAfterPolicy } from '../gate/admission/retry-wait.ts';
import type { MarkerStrategy } from '../prefix/freeze.ts';
import { RESPONSES_CACHE_TTLS, type ResponsesCacheTtl } from '../wire/cache.ts';
import type { ToolLimits } from '../tools/limits.ts';
import { EXECUTABLE_TOOL_NAMES, FILE_TOOL_NAMES, type ExecutableToolName } from '../wire/tool-names.ts';
import { toolLimitsSchema } from '../tools/limits.ts';
import { type ToolFlags, toolFlagShape, toolFlagsOf } from '../tools/tool-flags.ts';
import { type HostTool, hostToolsSchema } from '../tools/host-tools.ts';
import { permissionPolicySchema, type PermissionHandler, type PermissionPolicy } from '../tools/permissions.ts';
import { ForkcacheError } from '../util/errors.ts';
import { parseOrThrow } from '../util/validation.ts';
import { type TestHooks, testHooksOf } from '../pool/test-hooks.ts';
import {
  DEFAULT_PROVIDER,
  OPENAI_WIRES,
  type OpenAiWire,
  providerIdSchema,
  type ProviderId,
  endpointFromEnv,
  providerWireOf,
} from '../wire/providers.ts';
import { assertEndpoint } from './endpoint.ts';
import type { DistributedOptions } from '../../integrations/distributed/keys.ts';
import type { SlotFill } from './bench-options.ts';
import { benchOptionsOf } from './bench-options.ts';
import { assertRepoNames, repoNameSchema } from './fan-out/repos.ts';
import {
  type ResolvedSettings,
  resolveSettings,
  settingOptionShape,
  type SettingOptions,
} from '../settings/engine-settings.ts';

/**
 * Options of `ForkEngine.create`. Every field is optional. The engine's settings (`maxTurns`,
 * `sandbox`, `sparseWorktrees` …) are declared once, in `settings/engine-settings.ts`, and
 * the flags the forks' tools read in the worker (`network`) in `tools/tool-flags.ts`; the
 * fields below have a shape of their own.
 */
export interface ForkEngineOptions extends Partial<ToolFlags>, SettingOptions {
  /** An SDK client: its `baseURL` and `apiKey` are what the workers use too. */
  client?: Anthropic;
  /**
   * The API the forks speak (default `anthropic`). `openai`, `dashscope`, `deepseek` and
   * `openai-compatible` (vLLM, SGLang) speak Chat Completions through the `openai` client;
   * `baseURL` then includes `/v1`, and defaults come from `OPENAI_BASE_URL`/`OPENAI_API_KEY`,
   * `DASHSCOPE_BASE_URL`/`DASHSCOPE_API_KEY`, `DEEPSEEK_BASE_URL`/`DEEPSEEK_API_KEY`.
   */
  provider?: ProviderId;
  /**
   * OpenAI only: the API the forks speak, `chat` (Chat Completions, the default) or `responses`
   * (the Responses API: its head carries `prompt_cache_options`, the warm-up is a `prewarm`
   * that generates nothing, breakpoints mark the shared prefix, writes are reported by TTL).
   */
  openaiWire?: OpenAiWire;
  /**
   * The Responses API's cache lifetime for a fan-out's writes: `30m`, `12h`, or `auto` (the
   * default): `12h` when the fan-out is expected to outlive 30 minutes (`expectedFanOutMs`).
   */
  responsesTtl?: ResponsesCacheTtl | 'auto';
  baseURL?: string;
  apiKey?: string;
  /** Extra headers on every request (e.g. `x-forkcache-script` for the emulator). */
  headers?: Record<string, string>;
  /**
   * The SDK's own retries of requests that bill nothing (token counts). A request that may be
   * billed (a fork's turn, a pre-warm) is never resent by the SDK: a resend after a body cut
   * mid-way could be billed twice with one response seen. The loop retries it instead
   * (`turnRetry`), each attempt in the ledger.
   */
  maxRetries?: number;
  /** One request's timeout in milliseconds (default 600,000). */
  timeoutMs?: number;
  pool?: {
    /** Worker threads (default: min(4, cores)). */
    maxThreads?: number;
    /** Forks one thread runs at once: the loops wait on I/O (default 8). */
    concurrentTasksPerWorker?: number;
    /** Forks queued beyond the running ones; default unbounded. A queue, never a rejection. */
    maxQueue?: number;
    /** Memory limits of each worker thread (Node's `resourceLimits`); a worker over them dies and its forks continue on a fresh one. */
    resourceLimits?: {
      maxOldGenerationSizeMb?: number;
      maxYoungGenerationSizeMb?: number;
      codeRangeSizeMb?: number;
      stackSizeMb?: number;
    };
  };
  /**
   * llama.cpp: the server's `--slot-save-path` as this machine sees it. Between a fork's turns
   * its KV cache is saved there while other forks use its slot; with this folder forkcache
   * deletes those files when the fan-out ends (and `forkcache clean` those a crash left).
   * Default: `FORKCACHE_LLAMA_SLOT_SAVE_PATH`, else unknown (the files stay: said once).
   */
  slotSavePath?: string;
  /** The directory forks work in (default: the current directory). */
  workspace?: string;
  /**
   * The runs directory: each fan-out writes its run directory (`<runsDir>/<fanOutId>/`:
   * manifest, transcripts, events, summary) under it. Default: none (nothing written, no resume).
   */
  runsDir?: string;
  /** @deprecated Use `runsDir` (a run directory is one fan-out's folder); goes in the next minor release. */
  runDir?: string;
  /**
   * Capabilities a fork may use (default: the file tools; `bash` only when listed). They are
   * forkcache's names whoever's tools the parent declares: `bash` allows Claude Code's `Bash`
   * and Qwen Code's `run_shell_command`.
   */
  allow?: ExecutableToolName[];
  toolLimits?: Partial<ToolLimits>;
  /** Values removed from every tool result, besides the API key (tokens a command might print). */
  secrets?: string[];
  modelTable?: ModelCatalogue;
  clock?: Clock;
  /**
   * Under `isolation: 'worktree'`: the repositories of a plan over several, as folders relative
   * to `workspace` (each the top of a git work tree). Every fork then names its own in its
   * `repo` field; its worktree and branch are made in that repository, from that repository's
   * HEAD when the run starts.
   */
  repos?: readonly string[];
  /**
   * Run forks on other hosts: BullMQ jobs on Redis, consumed by `forkcache worker` processes
   * (each with its own Piscina pool). `concurrency` then limits forks in flight across all hosts.
   */
  distributed?: DistributedOptions;
  /** Which tool calls a fork may make freely, which it may not, and which need asking. */
  permissions?: PermissionPolicy;
  /**
   * Answers `ask` (the question bubbles up from the worker): an embedder's callback, or the
   * CLI's prompt. Without one, `ask` means no.
   */
  onPermission?: PermissionHandler;
  /**
   * Handlers of tools the parent declares that no built-in executor runs (`search_tickets`):
   * each runs on this thread, called from the fork's worker, with the fork's abort signal, its
   * timeout and result limit, redaction and the permission policy applied. A fan-out's own
   * `hostTools` add to these (and win for a name). See docs/library.md.
   */
  hostTools?: Record<string, HostTool>;
  /**
   * Retries of a whole turn after a retryable failure (a stream that broke or was cut mid-way,
   * a reset, a timeout, 408/409/429/5xx; the SDK resends none of them): the same bytes again
   * after a backoff, each attempt in the ledger. Default 3, 500 ms doubling to 8 s;
   * whatever the failures, a turn retries for at most `budgetMs` (default 10 min) from its first
   * failure, then the fork ends `failed` with `FORK_RETRY_BUDGET`.
   */
  turnRetry?: Partial<TurnRetryOptions>;
  /** The wait after a 429 or 529 (`RetryAfterPolicy`: a 1 s floor, a 60 s ceiling, 20% jitter by default). */
  retryAfter?: Partial<RetryAfterPolicy>;
}

export const engineOptionsSchema = z.strictObject({
  client: z
    .custom<Anthropic>((v) => typeof v === 'object' && v !== null && 'baseURL' in v, 'expected an Anthropic client')
    .optional(),
  provider: providerIdSchema.optional(),
  openaiWire: z.enum(OPENAI_WIRES).optional(),
  responsesTtl: z.enum([...RESPONSES_CACHE_TTLS, 'auto']).optional(),
  baseURL: z.url().optional(),
  apiKey: z.string().min(1).optional(),
  headers: z.record(z.string(), z.string()).optional(),
  maxRetries: z.number().int().min(0).max(10).optional(),
  timeoutMs: z.number().int().positive().optional(),
  pool: z
    .strictObject({
      maxThreads: z.number().int().positive().optional(),
      concurrentTasksPerWorker: z.number().int().positive().optional(),
      maxQueue: z.number().int().nonnegative().or(z.literal(Infinity)).optional(),
      resourceLimits: z
        .strictObject({
          maxOldGenerationSizeMb: z.number().positive().optional(),
          maxYoungGenerationSizeMb: z.number().positive().optional(),
          codeRangeSizeMb: z.number().positive().optional(),
          stackSizeMb: z.number().positive().optional(),
        })
        .optional(),
    })
    .optional(),
  slotSavePath: z.string().min(1).optional(),
  workspace: z.string().min(1).optional(),
  runsDir: z.string().min(1).optional(),
  runDir: z.string().min(1).optional(),
  allow: z.array(z.enum(EXECUTABLE_TOOL_NAMES)).optional(),
  toolLimits: toolLimitsSchema.optional(),
  ...toolFlagShape(() => z.boolean().optional()),
  ...settingOptionShape(),
  secrets: z.array(z.string()).optional(),
  modelTable: z.custom<ModelCatalogue>((v) => typeof v === 'object' && v !== null && 'models' in v).optional(),
  clock: z.custom<Clock>((v) => typeof v === 'object' && v !== null && 'now' in v && 'sleep' in v).optional(),
  turnRetry: z
    .strictObject({
      retries: z.number().int().min(0).max(20).optional(),
      baseMs: z.number().nonnegative().optional(),
      maxMs: z.number().nonnegative().optional(),
      budgetMs: z.number().int().positive().max(86_400_000).optional(),
    })
    .optional(),
  retryAfter: retryAfterOptionsSchema.optional(),
  permissions: permissionPolicySchema.optional(),
  repos: z.array(repoNameSchema).min(1).optional(),
  distributed: z
    .strictObject({
      redis: z.string().regex(/^rediss?:\/\//, 'expected a redis:// URL'),
      queue: z.string().min(1).optional(),
      secret: z.string().optional(),
      redisTimeoutMs: z.number().int().min(100).optional(),
    })
    .optional(),
  onPermission: z.custom<PermissionHandler>((v) => typeof v === 'function', 'expected a function').optional(),
  hostTools: hostToolsSchema.optional(),
});

export interface ResolvedEngineOptions extends ToolFlags, ResolvedSettings {
  /** Where requests go; its wire is set for `openaiWire: 'responses'` only. */
  api: ApiEndpoint & { provider: ProviderId };
  maxThreads: number;
  concurrentTasksPerWorker: number;
  maxQueue: number;
  resourceLimits: NonNullable<NonNullable<ForkEngineOptions['pool']>['resourceLimits']> | undefined;
  /** Set only through `withBenchOptions` (bench-options.ts). */
  slotFill: SlotFill;
  slotSavePath: string | undefined;
  responsesTtl: ResponsesCacheTtl | 'auto';
  /** Set only through `withBenchOptions` (bench-options.ts). */
  markers: MarkerStrategy;
  workspace: string;
  runsDir: string | undefined;
  allow: readonly ExecutableToolName[];
  toolLimits: Partial<ToolLimits>;
  secrets: string[];
  turnRetry: TurnRetryOptions;
  retryAfter: RetryAfterPolicy;
  permissions: PermissionPolicy;
  /** The repositories of a plan over several (workspace-relative); undefined: the workspace's one. */
  repos: readonly string[] | undefined;
  distributed: DistributedOptions | undefined;
  /** The engine's host tools, as given (their handlers are called with their own `this`). */
  hostTools: Readonly<Record<string, HostTool>>;
  /** Set only through `withTestHooks` (test-hooks.ts), never by a public option. */
  testHooks: TestHooks;
}

/** What `ForkEngine.options` shows: the resolved options, without the test hooks and the bench options. */
export type EngineSettings = Omit<ResolvedEngineOptions, 'testHooks' | 'markers' | 'slotFill'>;

/** Validate (errors name the field: `pool.maxThreads: …`) and fill in defaults. */
export function resolveEngineOptions(input: ForkEngineOptions): ResolvedEngineOptions {
  const o = parseOrThrow(engineOptionsSchema, input, 'INVALID_OPTION', 'ForkEngine options');
  if (o.isolation === 'worktree' && o.distributed) {
    throw new ForkcacheError('INVALID_OPTION', "isolation: 'worktree' is not available with the distributed backend", {
      data: { field: 'isolation' },
    });
  }
  if (o.maxUsd !== undefined && o.distributed) {
    // remote hosts admit their requests through the budget they share in Redis, not this cap
    throw new ForkcacheError(
      'INVALID_OPTION',
      'maxUsd: the spend cap is not available with the distributed backend yet',
      {
        data: { field: 'maxUsd' },
      },
    );
  }
  if (o.repos !== undefined) assertRepoNames(o.repos, o.isolation);
  if (o.runsDir !== undefined && o.runDir !== undefined && resolve(o.runsDir) !== resolve(o.runDir)) {
    throw new ForkcacheError('INVALID_OPTION', 'runDir: the deprecated name of runsDir; give one of them', {
      data: { field: 'runDir' },
    });
  }
  const runsDir = o.runsDir ?? o.runDir;
  if (o.isolation === 'worktree' && !runsDir) {
    throw new ForkcacheError(
      'INVALID_OPTION',
      "isolation: 'worktree' needs runsDir (the worktrees live in the run directory)",
      { data: { field: 'isolation' } },
    );
  }
  const bench = benchOptionsOf(input);
  const provider = o.provider ?? DEFAULT_PROVIDER;
  const wire = providerWireOf(provider);
  if (o.openaiWire === 'responses' && !wire.responsesApi)
    throw new ForkcacheError(
      'INVALID_OPTION',
      `openaiWire: 'responses' is OpenAI's API; provider '${provider}' speaks ${wire.chat ? 'Chat Completions' : 'the Messages API'}`,
      { data: { field: 'openaiWire' } },
    );
  if (!o.client) assertEndpoint(provider, o.baseURL, o.apiKey);
  // an Anthropic client the embedder passed (`client`) speaks the Messages API only
  const client = wire.chat ? undefined : o.client;
  const env = endpointFromEnv(wire.endpoint);
  const baseURL = o.baseURL ?? client?.baseURL ?? env.baseURL;
  const apiKey = o.apiKey || client?.apiKey || env.apiKey || 'no-key';
  return {
    api: {
      provider,
      ...(o.openaiWire === 'responses' ? { wire: 'responses' as const } : {}),
      baseURL,
      apiKey,
      maxRetries: o.maxRetries ?? 2,
      timeoutMs: o.timeoutMs ?? 600_000,
      headers: o.headers ?? {},
    },
    maxThreads: o.pool?.maxThreads ?? Math.min(4, availableParallelism()),
    concurrentTasksPerWorker: o.pool?.concurrentTasksPerWorker ?? 8,
    maxQueue: o.pool?.maxQueue ?? Infinity,
    resourceLimits: o.pool?.resourceLimits as ResolvedEngineOptions['resourceLimits'],
    slotFill: bench.slotFill ?? 'auto',
    slotSavePath: o.slotSavePath ?? (process.env['FORKCACHE_LLAMA_SLOT_SAVE_PATH'] || undefined),
    responsesTtl: o.responsesTtl ?? 'auto',
    markers: bench.markers ?? 'boundary',
    workspace: resolve(o.workspace ?? process.cwd()),
    runsDir: runsDir === undefined ? undefined : resolve(runsDir),
    allow: o.allow ?? [...FILE_TOOL_NAMES],
    toolLimits: (o.toolLimits ?? {}) as Partial<ToolLimits>,
    ...resolveSettings(o),
    ...toolFlagsOf(o),
    secrets: o.secrets ?? [],
    turnRetry: { ...DEFAULT_TURN_RETRY, ...(o.turnRetry as Partial<TurnRetryOptions> | undefined) },
    retryAfter: { ...DEFAULT_RETRY_AFTER, ...(o.retryAfter as Partial<RetryAfterPolicy> | undefined) },
    permissions: (o.permissions ?? {}) as PermissionPolicy,
    repos: o.repos,
    distributed: o.distributed as ResolvedEngineOptions['distributed'],
    hostTools: input.hostTools ?? {},
    testHooks: testHooksOf(input),
  };
}
