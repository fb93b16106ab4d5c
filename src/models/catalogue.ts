import builtinFile from './catalogue.json' with { type: 'json' };
import { readJsonFile } from '../json-file.ts';
import { catalogueInvalid, parseCatalogueFile } from './catalogue-file.ts';
import { type ModelRow, type ModelProvider, type ModelStatus, type PriceRowInput, type TokenClass } from './schema.ts';

/**
 * The model catalogue: every model forkcache knows, with its status, prices (as dated rows),
 * cache rules and request constraints. Data, not code: `catalogue.json` beside this file,
 * dated, overridable by a user file merged over it (`loadCatalogue(path)`). One module owns
 * it; the ledger, the economics, the emulator and the CLI all read it from here.
 */

/** Rates of one tier, USD per million tokens, cache prices resolved. */
export interface TierRates {
  inputPerMTok: number;
  outputPerMTok: number;
  cacheWrite5mPerMTok: number;
  cacheWrite1hPerMTok: number;
  cacheReadPerMTok: number;
}

/** One price tier: the whole row when unbanded (`name: null`), else one prompt-length band. */
export interface PriceTier extends TierRates {
  name: string | null;
  /** Requests whose prompt length is at most this pay this tier; null on the last tier. */
  upToPromptTokens: number | null;
  /** Fast mode (`speed: "fast"`) rates, when the model has them. */
  fast: TierRates | null;
}

/** Prices in force from `effectiveFrom` (inclusive, UTC) until the next row's date. */
export interface PriceRow {
  effectiveFrom: string;
  /** Token classes that make up the prompt length a band is picked by. */
  bandCounts: readonly TokenClass[];
  tiers: readonly PriceTier[];
}

export interface ModelConstraints {
  adaptiveThinkingOnly: boolean;
  forcedToolChoice: boolean;
  prefill: boolean;
  bindsThinkingBlocks: boolean;
  systemMessages: boolean;
}

export interface ModelEntry {
  id: string;
  aliases: readonly string[];
  family: string;
  /** Who serves it (wire format and cache rule); `anthropic` unless the row says otherwise. */
  provider: ModelProvider;
  status: ModelStatus;
  endOfLife: string | null;
  replacement: string | null;
  minCacheableTokens: number;
  contextWindow: number;
  maxOutputTokens: number;
  constraints: ModelConstraints;
  /** Whether `inference_geo` multipliers apply (Claude 4.6 and later). */
  inferenceGeo: boolean;
  /** Ascending by `effectiveFrom`; empty for a retired model. */
  prices: readonly PriceRow[];
  note: string | null;
}

export interface PriceModifiers {
  /** Batch API: every token class, stacks with caching. */
  batchMultiplier: number;
  /** `usage.inference_geo` → multiplier on every token class. */
  inferenceGeoMultipliers: Readonly<Record<string, number>>;
}

export interface ModelCatalogue {
  /** The date the prices were read (the user file's date when one is merged). */
  date: string;
  models: readonly ModelEntry[];
  modifiers: PriceModifiers;
}

const DEFAULT_MULTIPLIERS = { write5m: 1.25, write1h: 2, read: 0.1 };
const DEFAULT_MODIFIERS: PriceModifiers = { batchMultiplier: 0.5, inferenceGeoMultipliers: { us: 1.1 } };
const DEFAULT_CONSTRAINTS: ModelConstraints = {
  adaptiveThinkingOnly: false,
  forcedToolChoice: true,
  prefill: true,
  bindsThinkingBlocks: false,
  systemMessages: true,
};

type RatesInput = {
  inputPerMTok: number;
  outputPerMTok: number;
  cacheWrite5mPerMTok?: number | undefined;
  cacheWrite1hPerMTok?: number | undefined;
  cacheReadPerMTok?: number | undefined;
  cacheWrite5mMultiplier?: number | undefined;
  cacheWrite1hMultiplier?: number | undefined;
  cacheReadMultiplier?: number | undefined;
};

function resolveRates(r: RatesInput, like?: TierRates): TierRates {
  // Fast-mode rates keep the tier's cache multipliers unless they say otherwise.
  const ratio = (price: number | undefined, base: number): number | undefined =>
    price === undefined || base === 0 ? undefined : price / base;
  const m5 =
    r.cacheWrite5mMultiplier ??
    (like ? ratio(like.cacheWrite5mPerMTok, like.inputPerMTok) : undefined) ??
    DEFAULT_MULTIPLIERS.write5m;
  const m1 =
    r.cacheWrite1hMultiplier ??
    (like ? ratio(like.cacheWrite1hPerMTok, like.inputPerMTok) : undefined) ??
    DEFAULT_MULTIPLIERS.write1h;
  const mr =
    r.cacheReadMultiplier ??
    (like ? ratio(like.cacheReadPerMTok, like.inputPerMTok) : undefined) ??
    DEFAULT_MULTIPLIERS.read;
  // Derived prices are rounded to 1e-9 $/MTok: 3 × 0.1 is 0.3, not 0.30000000000000004.
  const derive = (multiple: number): number => Math.round(r.inputPerMTok * multiple * 1e9) / 1e9;
  return {
    inputPerMTok: r.inputPerMTok,
    outputPerMTok: r.outputPerMTok,
    cacheWrite5mPerMTok: r.cacheWrite5mPerMTok ?? derive(m5),
    cacheWrite1hPerMTok: r.cacheWrite1hPerMTok ?? derive(m1),
    cacheReadPerMTok: r.cacheReadPerMTok ?? derive(mr),
  };
}

function tierOf(
  name: string | null,
  upTo: number | null,
  r: RatesInput & { fast?: RatesInput | undefined },
): PriceTier {
  const rates = resolveRates(r);
  return { name, upToPromptTokens: upTo, ...rates, fast: r.fast ? resolveRates(r.fast, rates) : null };
}

function priceRow(row: PriceRowInput): PriceRow {
  if ('bands' in row) {
    return {
      effectiveFrom: row.effectiveFrom,
      bandCounts: row.bands.counts,
      tiers: row.bands.tiers.map((t) => tierOf(t.name, t.upToPromptTokens ?? null, t)),
    };
  }
  return { effectiveFrom: row.effectiveFrom, bandCounts: [], tiers: [tierOf(null, null, row)] };
}

function entryOf(row: ModelRow): ModelEntry {
  return {
    id: row.id,
    aliases: row.aliases,
    family: row.family ?? row.id,
    provider: row.provider,
    status: row.status,
    endOfLife: row.endOfLife ?? null,
    replacement: row.replacement ?? null,
    minCacheableTokens: row.minCacheableTokens ?? 1024,
    contextWindow: row.contextWindow ?? 200_000,
    maxOutputTokens: row.maxOutputTokens ?? 64_000,
    constraints: { ...DEFAULT_CONSTRAINTS, ...row.constraints },
    inferenceGeo: row.inferenceGeo,
    prices: row.prices.map(priceRow),
    note: row.note ?? null,
  };
}

function build(date: string, rows: readonly ModelRow[], modifiers: PriceModifiers, source: string): ModelCatalogue {
  const names = new Map<string, string>();
  for (const row of rows) {
    for (const name of [row.id, ...row.aliases]) {
      const owner = names.get(name);
      if (owner !== undefined)
        throw catalogueInvalid(source, `model "${name}" is named twice (${owner} and ${row.id})`, 'models');
      names.set(name, row.id);
    }
  }
  for (const row of rows) {
    if (row.replacement !== undefined && !names.has(row.replacement)) {
      throw catalogueInvalid(
        source,
        `${row.id}.replacement: "${row.replacement}" is not in the catalogue`,
        `${row.id}.replacement`,
      );
    }
  }
  return Object.freeze({ date, models: Object.freeze(rows.map(entryOf)), modifiers });
}

const BUILTIN_FILE = parseCatalogueFile(builtinFile, 'built-in model catalogue');

/** The catalogue shipped with the package. */
export const BUILTIN_CATALOGUE: ModelCatalogue = build(
  BUILTIN_FILE.date,
  BUILTIN_FILE.models,
  BUILTIN_FILE.modifiers ?? DEFAULT_MODIFIERS,
  'built-in model catalogue',
);

/**
 * Merge a user file (parsed JSON) over the built-in catalogue: rows replace built-in rows of
 * the same id, new ids are added, `replace: true` drops the built-in rows. The result carries
 * the user file's date.
 */
export function mergeCatalogue(override: unknown, source = 'model table'): ModelCatalogue {
  const file = parseCatalogueFile(override, source);
  const byId = new Map(file.replace ? [] : BUILTIN_FILE.models.map((row) => [row.id, row] as const));
  for (const row of file.models) byId.set(row.id, row);
  return build(file.date, [...byId.values()], file.modifiers ?? BUILTIN_CATALOGUE.modifiers, source);
}

/** The built-in catalogue, or a user file merged over it (`--model-table FILE`). */
export function loadCatalogue(path?: string): ModelCatalogue {
  if (path === undefined) return BUILTIN_CATALOGUE;
  return mergeCatalogue(readJsonFile(path, 'model table', 'MODEL_CATALOGUE_INVALID'), `model table ${path}`);
}

/**
 * Find a model by id or alias; a `-YYYYMMDD` or `-latest` suffix falls back to the base id.
 * Undefined for an id the catalogue does not know (which the API may still accept).
 */
export function findModel(id: string, catalogue: ModelCatalogue = BUILTIN_CATALOGUE): ModelEntry | undefined {
  const match = (name: string): ModelEntry | undefined =>
    catalogue.models.find((m) => m.id === name || m.aliases.includes(name));
  const exact = match(id);
  if (exact) return exact;
  const stripped = id.replace(/-(\d{8}|latest)$/, '');
  return stripped === id ? undefined : match(stripped);
}
