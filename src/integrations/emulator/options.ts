import { z } from 'zod';
import { systemClock, type Clock } from '../../core/util/clock.ts';
import { ForkcacheError } from '../../core/util/errors.ts';
import { BUILTIN_CATALOGUE, type ModelEntry, type ModelCatalogue } from '../../core/models/catalogue.ts';
import { parseOrThrow } from '../../core/util/validation.ts';
import { HEADER_NAME } from '../../core/wire/credentials.ts';
import { parseFaultSpec, validateFaultRules, type FaultKind, type FaultRule } from './faults.ts';
import { resolveLatency, type LatencyName, type LatencyProfile } from './latency.ts';
import type { ScriptList } from './scripts/registry.ts';
import type { ScriptedModel } from './scripts/types.ts';
import { DEFAULT_TOKEN_COSTS, type TokenCosts } from './tokens/block-tokens.ts';
import { claudeTokenizer, type Tokenizer } from './tokens/tokenizer.ts';
import { LOOKBACK_POSITIONS } from './cache/plan.ts';
import { EMULATOR_APIS, type EmulatorApi } from './openai/rules.ts';
import {
  presetTable,
  RATE_LIMIT_TIERS,
  type RateLimitTable,
  type RateLimitTier,
  tableFromFile,
} from '../../core/rate-limits/presets.ts';

/** The API's request size limit for the Messages API: 32 MiB. */
const DEFAULT_MAX_BODY_BYTES = 32 * 1024 * 1024;

/** Options of `startEmulator`. Every field is optional. */
export interface EmulatorOptions {
  /**
   * Which API to serve: `anthropic` (default: the Messages API), or an OpenAI-compatible Chat
   * Completions API with that provider's prompt-cache rule and usage fields (`openai`,
   * `dashscope`, `deepseek`).
   */
  api?: EmulatorApi;
  /** Interface to bind (default `127.0.0.1`: loopback only). */
  host?: string;
  /** TCP port; 0 (default) picks a free one. */
  port?: number;
  /** `off` (default: no waiting), `fast`, `realistic`, or a custom profile. */
  latency?: LatencyName | Partial<LatencyProfile>;
  /** Injected faults: a spec like `429:0.1,stream-error:0.05`, or parsed rules. */
  faults?: string | readonly FaultRule[];
  /**
   * Decide the fault of a request from its body (tests: "fail the first attempt of every
   * turn"). Consulted when no header forces one, before the seeded rules; undefined = no say.
   */
  faultFor?: (body: unknown) => FaultKind | 'none' | undefined;
  /**
   * Seeds fault draws (default 0) and, when given, message/request ids: the same seed gives the
   * same ids. Without one, ids carry a random per-process salt, so they never repeat across
   * restarts (clients persist message ids and send them back as `previous_message_id`).
   */
  seed?: number;
  /**
   * Hash and count Claude Code's `x-anthropic-billing-header:` first system block like any other
   * (default false: it is request metadata, left out of the cache key and of the token counts,
   * as the API evidently does — see docs/emulator.md).
   */
  cacheBillingBlock?: boolean;
  /** Write one JSON file per exchange into this directory (created if missing). */
  logDir?: string;
  /** Time source for TTLs and latency; pass a ManualClock in tests (default: system clock). */
  clock?: Clock;
  /** Model table (ids, minimum cacheable lengths); default: the built-in one. */
  modelTable?: ModelCatalogue;
  /** Override the minimum cacheable prefix: one number for all models, or per model id. */
  minCacheableTokens?: number | Readonly<Record<string, number>>;
  /** Default scripted model: a name (`echo`, `refactor`, or one of `scripts`) or an instance. */
  script?: string | ScriptedModel;
  /** Extra scripted models, selectable per request with `x-forkcache-script: <name>`. */
  scripts?: ScriptList;
  /** Largest accepted request body (default 32 MiB); larger → 413. */
  maxBodyBytes?: number;
  /** Open connections served at once (default 1,024); more are closed at once by the server. */
  maxConnections?: number;
  /** Request bytes buffered at once over every request (default 256 MiB); past it → 503. */
  maxInFlightBodyBytes?: number;
  /** A client must send its request headers within this (default 60 s; Node's `headersTimeout`). */
  headersTimeoutMs?: number;
  /** A client must send its whole request within this (default 5 min; Node's `requestTimeout`). */
  requestTimeoutMs?: number;
  /** How often those two are checked (default 30 s; Node's `connectionsCheckingInterval`). */
  timeoutCheckMs?: number;
  /** More headers to mask in the `logDir` exchange files (the built-in credential headers always are). */
  maskHeaders?: readonly string[];
  /** Token counter (default: the Claude BPE of `@anthropic-ai/tokenizer`). */
  tokenizer?: Tokenizer;
  /** Hidden token costs (tool-use system prompt, images). */
  tokenCosts?: Partial<TokenCosts>;
  /** When set, only this API key is accepted (401 otherwise). Any non-empty key by default. */
  apiKey?: string;
  /**
   * `retry-after` seconds on injected 429s (default 1); a string is sent as written (`0`, `-5`,
   * `abc`, `1e12`, an HTTP-date), to test a client against an API that sends nonsense.
   */
  retryAfterSeconds?: number | string;
  /** Lookback window in positions (default 20, the API's). */
  lookback?: number;
  /** How long `close()` waits for in-flight requests before cutting them (default 10 s, wall clock). */
  closeTimeoutMs?: number;
  /**
   * The API's rate limits: a tier preset (`start`, `build`, `scale`), a table, or the
   * `--rate-limits FILE` format (parsed JSON). Default: none (no limits, no headers).
   */
  rateLimits?: RateLimitTier | RateLimitTable | Record<string, unknown>;
}

const plainSchema = z.strictObject({
  api: z.enum(EMULATOR_APIS).default('anthropic'),
  host: z.string().min(1).default('127.0.0.1'),
  port: z.number().int().min(0).max(65535).default(0),
  seed: z.number().int().optional(),
  cacheBillingBlock: z.boolean().optional(),
  logDir: z.string().min(1).optional(),
  maxBodyBytes: z.number().int().positive().default(DEFAULT_MAX_BODY_BYTES),
  maxConnections: z.number().int().positive().default(1024),
  maxInFlightBodyBytes: z
    .number()
    .int()
    .positive()
    .default(8 * DEFAULT_MAX_BODY_BYTES),
  headersTimeoutMs: z.number().int().positive().default(60_000),
  requestTimeoutMs: z.number().int().positive().default(300_000),
  timeoutCheckMs: z.number().int().positive().default(30_000),
  maskHeaders: z.array(z.string().regex(HEADER_NAME, 'expected a header name')).default([]),
  minCacheableTokens: z
    .union([z.number().int().nonnegative(), z.record(z.string(), z.number().int().nonnegative())])
    .optional(),
  apiKey: z.string().min(1).optional(),
  retryAfterSeconds: z.union([z.number().nonnegative(), z.string().min(1)]).default(1),
  lookback: z.number().int().positive().default(LOOKBACK_POSITIONS),
  closeTimeoutMs: z.number().nonnegative().default(10_000),
  tokenCosts: z
    .strictObject({
      toolPromptTokens: z.number().int().nonnegative().optional(),
      imageTokens: z.number().int().nonnegative().optional(),
    })
    .optional(),
});

export interface ResolvedOptions {
  api: EmulatorApi;
  host: string;
  port: number;
  /** Seed of fault draws (0 when none was given). */
  seed: number;
  /** Seed of message/request ids; undefined = a random salt per emulator. */
  idSeed: number | undefined;
  cacheBillingBlock: boolean;
  logDir: string | undefined;
  maxBodyBytes: number;
  maxConnections: number;
  maxInFlightBodyBytes: number;
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  timeoutCheckMs: number;
  maskHeaders: readonly string[];
  apiKey: string | undefined;
  retryAfterSeconds: number | string;
  lookback: number;
  closeTimeoutMs: number;
  latency: LatencyProfile;
  faults: FaultRule[];
  faultFor: ((body: unknown) => FaultKind | 'none' | undefined) | undefined;
  clock: Clock;
  modelTable: ModelCatalogue;
  tokenizer: Tokenizer;
  tokenCosts: TokenCosts;
  script: string | ScriptedModel;
  scripts: ScriptList;
  minCacheable(model: ModelEntry): number;
  rateLimits: RateLimitTable | undefined;
}

/** Validate options and fill defaults. Bad input → ForkcacheError INVALID_OPTION naming the field. */
export function resolveOptions(options: EmulatorOptions = {}): ResolvedOptions {
  const { latency, faults, faultFor, clock, modelTable, tokenizer, script, scripts, rateLimits, ...plain } = options;
  const p = parseOrThrow(plainSchema, plain, 'INVALID_OPTION', 'emulator options');
  if (p.headersTimeoutMs > p.requestTimeoutMs)
    throw new ForkcacheError(
      'INVALID_OPTION',
      'emulator options: headersTimeoutMs: must not exceed requestTimeoutMs (the headers are part of the request)',
    );
  if (tokenizer !== undefined && typeof tokenizer.count !== 'function') {
    throw new ForkcacheError(
      'INVALID_OPTION',
      'emulator options: tokenizer: expected an object with a count(text) method',
    );
  }
  if (clock !== undefined && (typeof clock.now !== 'function' || typeof clock.sleep !== 'function')) {
    throw new ForkcacheError('INVALID_OPTION', 'emulator options: clock: expected a Clock with now() and sleep()');
  }
  const min = p.minCacheableTokens;
  return {
    api: p.api,
    host: p.host,
    port: p.port,
    seed: p.seed ?? 0,
    idSeed: p.seed,
    cacheBillingBlock: p.cacheBillingBlock ?? false,
    logDir: p.logDir,
    maxBodyBytes: p.maxBodyBytes,
    maxConnections: p.maxConnections,
    maxInFlightBodyBytes: p.maxInFlightBodyBytes,
    headersTimeoutMs: p.headersTimeoutMs,
    requestTimeoutMs: p.requestTimeoutMs,
    timeoutCheckMs: p.timeoutCheckMs,
    maskHeaders: p.maskHeaders,
    apiKey: p.apiKey,
    retryAfterSeconds: p.retryAfterSeconds,
    lookback: p.lookback,
    closeTimeoutMs: p.closeTimeoutMs,
    latency: resolveLatency(latency),
    faults: typeof faults === 'string' ? parseFaultSpec(faults) : validateFaultRules(faults ?? []),
    faultFor,
    clock: clock ?? systemClock,
    modelTable: modelTable ?? BUILTIN_CATALOGUE,
    tokenizer: tokenizer ?? claudeTokenizer,
    tokenCosts: {
      // The hidden tool-use system prompt is the Messages API's; Chat APIs bill the tools as sent.
      toolPromptTokens:
        p.tokenCosts?.toolPromptTokens ?? (p.api === 'anthropic' ? DEFAULT_TOKEN_COSTS.toolPromptTokens : 0),
      imageTokens: p.tokenCosts?.imageTokens ?? DEFAULT_TOKEN_COSTS.imageTokens,
    },
    script: script ?? 'echo',
    scripts: scripts ?? {},
    rateLimits: resolveRateLimitOption(rateLimits),
    minCacheable: (model) => (typeof min === 'number' ? min : (min?.[model.id] ?? model.minCacheableTokens)),
  };
}

function resolveRateLimitOption(value: EmulatorOptions['rateLimits']): RateLimitTable | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string') {
    if (!(RATE_LIMIT_TIERS as readonly string[]).includes(value))
      throw new ForkcacheError(
        'INVALID_OPTION',
        `emulator options: rateLimits: expected ${RATE_LIMIT_TIERS.join(', ')}, a table or a file object, got "${value}"`,
      );
    return presetTable(value as RateLimitTier);
  }
  // a resolved table has `source` and per-class rows; anything else is the file format
  if (
    typeof value === 'object' &&
    value !== null &&
    'source' in value &&
    'classes' in value &&
    'windowSeconds' in value
  )
    return value as RateLimitTable;
  return tableFromFile(value, 'emulator options: rateLimits');
}
