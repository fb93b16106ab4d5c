import { z } from 'zod';
import { ForkcacheError, type CodeWithData } from '../util/errors.ts';
import { formatPath } from '../util/validation.ts';

/**
 * Cache writes split by lifetime, as the API reports them in `usage.cache_creation`. OpenAI's
 * Responses API writes for 30 minutes or 12 hours (`cache_write_tokens_details`): present only
 * when a usage has such writes, and priced at the row's 5-minute and 1-hour write rates, its
 * short and long lifetimes (OpenAI's rows record the same multiplier for both).
 */
export interface CacheCreationSplit {
  ephemeral_5m_input_tokens: number;
  ephemeral_1h_input_tokens: number;
  ttl_30m_input_tokens?: number;
  ttl_12h_input_tokens?: number;
}

type SplitInput = {
  ephemeral_5m_input_tokens?: number | null | undefined;
  ephemeral_1h_input_tokens?: number | null | undefined;
  ttl_30m_input_tokens?: number | null | undefined;
  ttl_12h_input_tokens?: number | null | undefined;
};

/** A split's written total, every lifetime. */
function splitTotal(split: SplitInput): number {
  return (
    (split.ephemeral_5m_input_tokens ?? 0) +
    (split.ephemeral_1h_input_tokens ?? 0) +
    (split.ttl_30m_input_tokens ?? 0) +
    (split.ttl_12h_input_tokens ?? 0)
  );
}

/** The split with OpenAI's lifetimes kept only when non-zero (older records never carry them). */
function splitOf(split: SplitInput): CacheCreationSplit {
  const m30 = split.ttl_30m_input_tokens ?? 0;
  const h12 = split.ttl_12h_input_tokens ?? 0;
  return {
    ephemeral_5m_input_tokens: split.ephemeral_5m_input_tokens ?? 0,
    ephemeral_1h_input_tokens: split.ephemeral_1h_input_tokens ?? 0,
    ...(m30 > 0 ? { ttl_30m_input_tokens: m30 } : {}),
    ...(h12 > 0 ? { ttl_12h_input_tokens: h12 } : {}),
  };
}

/**
 * One request's token usage, normalised: every counter is a non-negative integer (never null).
 * Total input = `input_tokens + cache_creation_input_tokens + cache_read_input_tokens`
 * (`input_tokens` counts only the tokens after the last cache marker).
 * `cache_creation`, when present, sums to `cache_creation_input_tokens`; when absent every
 * written token is billed as a 5-minute write.
 */
export interface Usage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  output_tokens: number;
  cache_creation?: CacheCreationSplit;
  /** Billing modifiers the API reports in `usage` (batch, `inference_geo`, fast mode). */
  service_tier?: string;
  inference_geo?: string;
  speed?: string;
  /** What a local engine (llama.cpp's `timings`) says it spent: prompt processing and generation, ms. */
  timings?: EngineTimings;
}

/** An engine's own account of one request's compute time (never part of a price). */
export interface EngineTimings {
  prompt_ms: number;
  predicted_ms: number;
}

/**
 * What `normalizeUsage` accepts: the SDK's `Anthropic.Usage` (nullable counters, extra fields
 * such as `server_tool_use` are ignored), the partial usage of a streaming event, or a `Usage`.
 */
export interface UsageInput {
  input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  output_tokens?: number | null;
  cache_creation?: SplitInput | null;
  service_tier?: string | null;
  inference_geo?: string | null;
  speed?: string | null;
  timings?: EngineTimings | null;
}

const count = z.number().int().nonnegative().nullish();
const millis = z.number().finite().nonnegative();

/** Zod schema for `UsageInput` (unknown keys are stripped). Exposed for record schemas. */
export const usageInputSchema = z.object({
  input_tokens: count,
  cache_creation_input_tokens: count,
  cache_read_input_tokens: count,
  output_tokens: count,
  cache_creation: z
    .object({
      ephemeral_5m_input_tokens: count,
      ephemeral_1h_input_tokens: count,
      ttl_30m_input_tokens: count,
      ttl_12h_input_tokens: count,
    })
    .nullish(),
  service_tier: z.string().nullish(),
  inference_geo: z.string().nullish(),
  speed: z.string().nullish(),
  timings: z.object({ prompt_ms: millis, predicted_ms: millis }).nullish(),
});

/** A usage of all zeros. */
export const ZERO_USAGE: Readonly<Usage> = Object.freeze({
  input_tokens: 0,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0,
  output_tokens: 0,
});

/**
 * Normalise a parsed `UsageInput`: nulls become 0, and the TTL split is checked against the
 * creation total. Throws with `code`, naming `field.cache_creation` on a mismatch.
 */
export function fromParsedUsage(
  parsed: z.output<typeof usageInputSchema>,
  field: string,
  code: CodeWithData<{ field: string }>,
): Usage {
  const usage: Usage = {
    input_tokens: parsed.input_tokens ?? 0,
    cache_creation_input_tokens: parsed.cache_creation_input_tokens ?? 0,
    cache_read_input_tokens: parsed.cache_read_input_tokens ?? 0,
    output_tokens: parsed.output_tokens ?? 0,
  };
  // Modifiers are kept only when they change the price (a plain request carries none).
  if (parsed.service_tier === 'batch') usage.service_tier = parsed.service_tier;
  if (parsed.inference_geo && parsed.inference_geo !== 'global') usage.inference_geo = parsed.inference_geo;
  if (parsed.speed === 'fast') usage.speed = parsed.speed;
  if (parsed.timings)
    usage.timings = { prompt_ms: parsed.timings.prompt_ms, predicted_ms: parsed.timings.predicted_ms };
  const split = parsed.cache_creation;
  if (split) {
    const sum = splitTotal(split);
    if (sum === usage.cache_creation_input_tokens) {
      usage.cache_creation = splitOf(split);
    } else if (sum !== 0) {
      // An all-zero split next to a non-zero total is what older responses carry: it means
      // "no breakdown", so it is dropped (billed as 5m). Any other mismatch is a bad record.
      throw new ForkcacheError(
        code,
        `${field}.cache_creation: the writes by lifetime (${sum}) must equal cache_creation_input_tokens (${usage.cache_creation_input_tokens})`,
        { data: { field: `${field}.cache_creation` } },
      );
    }
  }
  return usage;
}

const isCount = (v: unknown): boolean =>
  v === undefined || v === null || (Number.isSafeInteger(v) && (v as number) >= 0);
const isText = (v: unknown): boolean => v === undefined || v === null || typeof v === 'string';
const isPlain = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && Object.getPrototypeOf(v) === Object.prototype;

/**
 * The schema's answer for the usage every response carries (plain counters), without running
 * the schema: a proxy normalises one per exchange, and the schema is most of that cost. Anything
 * else (undefined when not plainly valid) goes through the schema for its error message.
 */
function plainUsage(raw: unknown): z.output<typeof usageInputSchema> | undefined {
  if (!isPlain(raw)) return undefined;
  const {
    input_tokens,
    cache_creation_input_tokens,
    cache_read_input_tokens,
    output_tokens,
    cache_creation,
    service_tier,
    inference_geo,
    speed,
    timings,
  } = raw;
  if (
    !isCount(input_tokens) ||
    !isCount(cache_creation_input_tokens) ||
    !isCount(cache_read_input_tokens) ||
    !isCount(output_tokens)
  )
    return undefined;
  if (!isText(service_tier) || !isText(inference_geo) || !isText(speed)) return undefined;
  // engine timings are rare (local servers only): the schema checks them
  if (timings !== undefined && timings !== null) return undefined;
  let split: z.output<typeof usageInputSchema>['cache_creation'] = cache_creation as null | undefined;
  if (cache_creation !== undefined && cache_creation !== null) {
    if (
      !isPlain(cache_creation) ||
      !isCount(cache_creation['ephemeral_5m_input_tokens']) ||
      !isCount(cache_creation['ephemeral_1h_input_tokens']) ||
      !isCount(cache_creation['ttl_30m_input_tokens']) ||
      !isCount(cache_creation['ttl_12h_input_tokens'])
    )
      return undefined;
    split = {
      ephemeral_5m_input_tokens: cache_creation['ephemeral_5m_input_tokens'] as number | null | undefined,
      ephemeral_1h_input_tokens: cache_creation['ephemeral_1h_input_tokens'] as number | null | undefined,
      ttl_30m_input_tokens: cache_creation['ttl_30m_input_tokens'] as number | null | undefined,
      ttl_12h_input_tokens: cache_creation['ttl_12h_input_tokens'] as number | null | undefined,
    };
  }
  return {
    input_tokens: input_tokens as number | null | undefined,
    cache_creation_input_tokens: cache_creation_input_tokens as number | null | undefined,
    cache_read_input_tokens: cache_read_input_tokens as number | null | undefined,
    output_tokens: output_tokens as number | null | undefined,
    cache_creation: split,
    service_tier: service_tier as string | null | undefined,
    inference_geo: inference_geo as string | null | undefined,
    speed: speed as string | null | undefined,
  };
}

/**
 * Normalise any usage shape (e.g. `Anthropic.Usage`) to `Usage`. Negative or fractional
 * counters throw `LEDGER_INVALID_USAGE` naming the field.
 *
 * @example normalizeUsage(message.usage) // { input_tokens: 12, cache_read_input_tokens: 48500, ... }
 */
export function normalizeUsage(raw: UsageInput, field = 'usage'): Usage {
  const plain = plainUsage(raw);
  if (plain) return fromParsedUsage(plain, field, 'LEDGER_INVALID_USAGE');
  const result = usageInputSchema.safeParse(raw);
  if (!result.success) {
    const issue = result.error.issues[0];
    const path = issue ? formatPath([field, ...issue.path]) : field;
    throw new ForkcacheError('LEDGER_INVALID_USAGE', `${path}: ${issue?.message ?? 'invalid usage'}`, {
      data: { field: path },
    });
  }
  return fromParsedUsage(result.data, field, 'LEDGER_INVALID_USAGE');
}

/** Total input tokens of a request: uncached + written + read. */
export function totalInputTokens(usage: Usage): number {
  return usage.input_tokens + usage.cache_creation_input_tokens + usage.cache_read_input_tokens;
}

/** The TTL split of a usage; without an explicit split every write counts as 5m. */
export function creationSplit(usage: Usage): CacheCreationSplit {
  return (
    usage.cache_creation ?? {
      ephemeral_5m_input_tokens: usage.cache_creation_input_tokens,
      ephemeral_1h_input_tokens: 0,
    }
  );
}

/**
 * Add two usages. The result carries a TTL split when either side has one (the other side's
 * writes count as 5m, as they are billed), so `cost(a + b) = cost(a) + cost(b)` exactly.
 */
export function addUsage(a: Usage, b: Usage): Usage {
  const sum: Usage = {
    input_tokens: a.input_tokens + b.input_tokens,
    cache_creation_input_tokens: a.cache_creation_input_tokens + b.cache_creation_input_tokens,
    cache_read_input_tokens: a.cache_read_input_tokens + b.cache_read_input_tokens,
    output_tokens: a.output_tokens + b.output_tokens,
  };
  if (a.cache_creation || b.cache_creation) {
    const sa = creationSplit(a);
    const sb = creationSplit(b);
    sum.cache_creation = splitOf({
      ephemeral_5m_input_tokens: sa.ephemeral_5m_input_tokens + sb.ephemeral_5m_input_tokens,
      ephemeral_1h_input_tokens: sa.ephemeral_1h_input_tokens + sb.ephemeral_1h_input_tokens,
      ttl_30m_input_tokens: (sa.ttl_30m_input_tokens ?? 0) + (sb.ttl_30m_input_tokens ?? 0),
      ttl_12h_input_tokens: (sa.ttl_12h_input_tokens ?? 0) + (sb.ttl_12h_input_tokens ?? 0),
    });
  }
  return sum;
}

/** Sum any number of usages (`ZERO_USAGE` for none). */
export function sumUsage(usages: Iterable<Usage>): Usage {
  let total: Usage = { ...ZERO_USAGE };
  for (const usage of usages) total = addUsage(total, usage);
  return total;
}
