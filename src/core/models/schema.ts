import { z } from 'zod';
import { calendarDate } from './dates.ts';

/**
 * The format of the model catalogue file (`catalogue.json` in the package, and the user file
 * merged over it with `--model-table FILE`). Prices are USD per million tokens. Cache prices
 * are given either as prices (`cacheReadPerMTok`) or as multipliers of the input price
 * (`cacheReadMultiplier`); absent both, the long-standing 1.25x / 2x / 0.1x apply.
 */

const isoDate = calendarDate;

/**
 * Upper bounds that keep every cost an exact integer of nano-dollars: at the largest price
 * (10^4 USD/MTok = 10^7 nano-dollars a token), cache multiplier (10) and geography modifier
 * (10; batch is a discount, at most 1) together a token costs at most 10^9 nano-dollars, so a
 * request of 9 million tokens stays below 2^53. The dearest list price today is a few hundred
 * USD per million tokens: the bounds refuse only mistakes (`1e308`, a run of extra zeros).
 */
const MAX_PRICE_PER_MTOK = 10_000;
const MAX_MULTIPLIER = 10;
const perMTok = z
  .number()
  .finite()
  .nonnegative()
  .max(MAX_PRICE_PER_MTOK, `expected a price of at most ${MAX_PRICE_PER_MTOK} USD per million tokens`);
const multiplier = z
  .number()
  .finite()
  .nonnegative()
  .max(MAX_MULTIPLIER, `expected a multiplier of at most ${MAX_MULTIPLIER}`);

/** The rates of one price tier (or of a whole row when it has no bands). */
const ratesShape = {
  inputPerMTok: perMTok,
  outputPerMTok: perMTok,
  cacheWrite5mPerMTok: perMTok.optional(),
  cacheWrite1hPerMTok: perMTok.optional(),
  cacheReadPerMTok: perMTok.optional(),
  cacheWrite5mMultiplier: multiplier.optional(),
  cacheWrite1hMultiplier: multiplier.optional(),
  cacheReadMultiplier: multiplier.optional(),
};

/** Fast mode has its own base rates; its cache prices keep the tier's multipliers. */
const fastSchema = z.strictObject(ratesShape);

const tierSchema = z.strictObject({
  name: z.string().min(1),
  /** The tier applies to requests whose prompt length is at most this; the last tier has none. */
  upToPromptTokens: z.number().int().positive().optional(),
  ...ratesShape,
  fast: fastSchema.optional(),
});

/** Which token classes make up a request's prompt length when a band is picked. */
export const TOKEN_CLASSES = ['input', 'cacheWrite', 'cacheRead'] as const;
export type TokenClass = (typeof TOKEN_CLASSES)[number];

const bandsSchema = z.strictObject({
  counts: z.array(z.enum(TOKEN_CLASSES)).min(1),
  tiers: z.array(tierSchema).min(2),
});

const priceRowSchema = z.union([
  z.strictObject({ effectiveFrom: isoDate, ...ratesShape, fast: fastSchema.optional() }),
  z.strictObject({ effectiveFrom: isoDate, bands: bandsSchema }),
]);

const constraintsSchema = z.strictObject({
  /** Only `thinking: { type: "adaptive" }` is accepted (`enabled` / `disabled` are a 400). */
  adaptiveThinkingOnly: z.boolean().default(false),
  /** `tool_choice` `any` / `tool` is accepted. */
  forcedToolChoice: z.boolean().default(true),
  /** A conversation may end with an assistant turn (prefill). */
  prefill: z.boolean().default(true),
  /** A replayed thinking block must belong to the same conversation prefix. */
  bindsThinkingBlocks: z.boolean().default(false),
  /**
   * `role: "system"` turns inside `messages` are accepted. Claude Code sends them on every
   * 4.8+/5.x model and not before, so the catalogue marks 4.7 and older false (an inference:
   * the API's per-model support is not published).
   */
  systemMessages: z.boolean().default(true),
});

export const STATUSES = ['current', 'legacy', 'deprecated', 'retired'] as const;
export type ModelStatus = (typeof STATUSES)[number];

/**
 * Who serves a model, and so its wire format and cache rule: the Messages API (`anthropic`) or
 * an OpenAI-compatible Chat Completions API with its provider's own caching.
 */
export const PROVIDERS = ['anthropic', 'openai', 'dashscope', 'deepseek'] as const;
export type ModelProvider = (typeof PROVIDERS)[number];

export const modelRowSchema = z.strictObject({
  id: z.string().min(1),
  /** Dated snapshots and other names the API accepts for the same model. */
  aliases: z.array(z.string().min(1)).default([]),
  family: z.string().min(1).optional(),
  /** Absent: `anthropic` (every row before providers existed). */
  provider: z.enum(PROVIDERS).default('anthropic'),
  status: z.enum(STATUSES).default('current'),
  /** The first day requests fail (the deprecations page's retirement date). */
  endOfLife: isoDate.optional(),
  replacement: z.string().min(1).optional(),
  /** Below this prefix length nothing is cached (both counters 0, no error). */
  minCacheableTokens: z.number().int().nonnegative().optional(),
  contextWindow: z.number().int().positive().optional(),
  maxOutputTokens: z.number().int().positive().optional(),
  constraints: constraintsSchema.optional(),
  /** `inference_geo: "us"` is billed with the catalogue's multiplier (Claude 4.6 and later). */
  inferenceGeo: z.boolean().default(true),
  prices: z.array(priceRowSchema).default([]),
  /** Where the prices were read and when; printed beside every figure priced with them. */
  source: z
    .strictObject({
      /** The page or list the prices come from. */
      name: z.string().min(1),
      /** The date of the copy they were read from. */
      retrieved: isoDate,
      /** A copy kept by someone else, not checked against the provider's own page. */
      thirdParty: z.boolean().default(false),
    })
    .optional(),
  note: z.string().optional(),
});

export const catalogueFileSchema = z.strictObject({
  date: isoDate,
  sources: z.string().optional(),
  /** An override file only: drop the built-in models instead of merging by id. */
  replace: z.boolean().default(false),
  modifiers: z
    .strictObject({
      batchMultiplier: multiplier
        .max(1, 'expected a multiplier of at most 1 (the batch API is a discount)')
        .default(0.5),
      inferenceGeoMultipliers: z.record(z.string(), multiplier).default({ us: 1.1 }),
    })
    .optional(),
  models: z.array(modelRowSchema),
});

export type ModelRow = z.output<typeof modelRowSchema>;
export type PriceRowInput = z.output<typeof priceRowSchema>;
export type CatalogueFile = z.output<typeof catalogueFileSchema>;
