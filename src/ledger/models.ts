import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { ForkcacheError } from '../errors.ts';
import { formatZodIssues } from '../validation.ts';

/**
 * Prices, cache multipliers, minimum cacheable prefix lengths and context sizes: one table,
 * read from the public pricing and prompt-caching pages on the date below. Prices change;
 * users override the table from a JSON file (`loadModelTable`).
 */
export const MODEL_TABLE_DATE = '2026-11-30';

export interface ModelInfo {
  /** Canonical id, e.g. `claude-sonnet-4-5`. Dated snapshots (`…-20250929`) resolve to it. */
  id: string;
  family: string;
  /** USD per million tokens. */
  inputPerMTok: number;
  outputPerMTok: number;
  /** Multipliers on the input price. */
  cacheWrite5mMultiplier: number;
  cacheWrite1hMultiplier: number;
  cacheReadMultiplier: number;
  /** Below this prefix length nothing is cached (both counters 0, no error). */
  minCacheableTokens: number;
  contextWindow: number;
}

export interface ModelTable {
  date: string;
  models: readonly ModelInfo[];
}

const CACHE = { cacheWrite5mMultiplier: 1.25, cacheWrite1hMultiplier: 2, cacheReadMultiplier: 0.1 };

function m(id: string, family: string, input: number, output: number, minCacheable: number, contextWindow = 200_000): ModelInfo {
  return { id, family, inputPerMTok: input, outputPerMTok: output, ...CACHE, minCacheableTokens: minCacheable, contextWindow };
}

// Minimum cacheable lengths: 1024 (Sonnet 4/4.5/4.6, Opus 4/4.1, Sonnet 5), 2048 (Opus 4.7,
// Haiku 3.5), 4096 (Opus 4.5/4.6, Haiku 4.5). "512 for some newest models" is not attributed
// to a model on the pages we read, so Opus 4.8 / 5 keep 1024 until a user overrides them.
// Sonnet 5 is listed at its launch price (2 / 10); it later became 3 / 15: override if needed.
export const DEFAULT_MODEL_TABLE: ModelTable = {
  date: MODEL_TABLE_DATE,
  models: [
    m('claude-opus-5', 'opus-5', 5, 25, 1024, 1_000_000),
    m('claude-opus-4-8', 'opus-4.8', 5, 25, 1024, 1_000_000),
    m('claude-opus-4-7', 'opus-4.7', 5, 25, 2048, 1_000_000),
    m('claude-opus-4-6', 'opus-4.6', 5, 25, 4096, 1_000_000),
    m('claude-opus-4-5', 'opus-4.5', 5, 25, 4096),
    m('claude-opus-4-1', 'opus-4.1', 15, 75, 1024),
    m('claude-opus-4-0', 'opus-4', 15, 75, 1024),
    m('claude-opus-4', 'opus-4', 15, 75, 1024),
    m('claude-sonnet-5', 'sonnet-5', 2, 10, 1024, 1_000_000),
    m('claude-sonnet-4-6', 'sonnet-4.6', 3, 15, 1024, 1_000_000),
    m('claude-sonnet-4-5', 'sonnet-4.5', 3, 15, 1024, 1_000_000),
    m('claude-sonnet-4-0', 'sonnet-4', 3, 15, 1024),
    m('claude-sonnet-4', 'sonnet-4', 3, 15, 1024),
    m('claude-haiku-4-5', 'haiku-4.5', 1, 5, 4096),
    m('claude-3-5-haiku', 'haiku-3.5', 0.8, 4, 2048),
  ],
};

const modelInfoSchema = z.strictObject({
  id: z.string().min(1),
  family: z.string().min(1),
  inputPerMTok: z.number().nonnegative(),
  outputPerMTok: z.number().nonnegative(),
  cacheWrite5mMultiplier: z.number().nonnegative().default(1.25),
  cacheWrite1hMultiplier: z.number().nonnegative().default(2),
  cacheReadMultiplier: z.number().nonnegative().default(0.1),
  minCacheableTokens: z.number().int().nonnegative(),
  contextWindow: z.number().int().positive().default(200_000),
});

const tableOverrideSchema = z.strictObject({
  date: z.string().min(1),
  /** `replace: true` drops the built-in models; otherwise entries are merged by id. */
  replace: z.boolean().default(false),
  models: z.array(modelInfoSchema),
});

/** Merge a user's table (already parsed JSON) over the built-in one. */
export function mergeModelTable(base: ModelTable, override: unknown, source = 'model table'): ModelTable {
  const parsed = tableOverrideSchema.safeParse(override);
  if (!parsed.success) {
    throw new ForkcacheError('INVALID_ARGUMENT', `${source}: ${formatZodIssues(parsed.error.issues)}`);
  }
  const byId = new Map(parsed.data.replace ? [] : base.models.map((info) => [info.id, info] as const));
  for (const info of parsed.data.models) byId.set(info.id, info);
  return { date: parsed.data.date, models: [...byId.values()] };
}

/** Read a JSON override file (see `mergeModelTable`) and merge it over the built-in table. */
export function loadModelTable(path: string, base: ModelTable = DEFAULT_MODEL_TABLE): ModelTable {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, 'utf8'));
  } catch (cause) {
    throw new ForkcacheError('INVALID_ARGUMENT', `model table ${path}: cannot read JSON (${(cause as Error).message})`, { cause });
  }
  return mergeModelTable(base, json, `model table ${path}`);
}

/**
 * Find a model by id. Accepts the canonical id, a dated snapshot (`claude-sonnet-4-5-20250929`)
 * or a `-latest` alias. Returns undefined for an unknown model.
 */
export function findModel(id: string, table: ModelTable = DEFAULT_MODEL_TABLE): ModelInfo | undefined {
  const exact = table.models.find((info) => info.id === id);
  if (exact) return exact;
  const stripped = id.replace(/-(\d{8}|latest)$/, '');
  if (stripped !== id) return table.models.find((info) => info.id === stripped);
  return undefined;
}

/** Like `findModel`, but an unknown model is an error naming the known ones. */
export function requireModel(id: string, table: ModelTable = DEFAULT_MODEL_TABLE, field = 'model'): ModelInfo {
  const info = findModel(id, table);
  if (!info) {
    const known = table.models.map((x) => x.id).join(', ');
    throw new ForkcacheError('INVALID_ARGUMENT', `${field}: unknown model "${id}" (known: ${known})`, { data: { field, model: id } });
  }
  return info;
}
