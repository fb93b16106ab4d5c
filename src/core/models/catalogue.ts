import builtinFile from './catalogue.json' with { type: 'json' };
import { readJsonFile } from '../util/json-file.ts';
import { catalogueInvalid, mergeRow, parseCatalogueFile } from './catalogue-file.ts';
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
  /** Where the prices come from and the date of that copy (the catalogue's sources when the row names none). */
  source: PriceSource;
  note: string | null;
}

/** Where a row's prices were read, as printed beside the figures priced with them. */
export interface PriceSource {
  name: string;
  /** The date of the copy read (the catalogue's date when the row gives none). */
  retrieved: string;
  /** A third party's copy, not checked against the provider's own page. */
  thirdParty: boolean;
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

/** A row whose price source is known: its own, or that of the file it came from. */
type SourcedRow = ModelRow & { source: PriceSource };

/** The source a file's rows carry when they name none: the file's own sources line and date. */
function fileSource(file: { date: string; sources?: string | undefined }, source: string): PriceSource {
  return { name: file.sources ?? source, retrieved: file.date, thirdParty: false };
}

function sourced(row: ModelRow, fallback: PriceSource): SourcedRow {
  return { ...row, source: row.source ?? fallback };
}

function entryOf(row: SourcedRow): ModelEntry {
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
    source: row.source,
    note: row.note ?? null,
  };
}

function build(date: string, rows: readonly SourcedRow[], modifiers: PriceModifiers, source: string): ModelCatalogue {
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
/** The built-in rows as written (before defaults): what a user's partial row is merged over. */
const BUILTIN_RAW = new Map(
  (builtinFile.models as readonly Record<string, unknown>[]).map((row) => [row['id'] as string, row] as const),
);

const BUILTIN_ROWS = BUILTIN_FILE.models.map((row) =>
  sourced(row, fileSource(BUILTIN_FILE, 'built-in model catalogue')),
);

/** The catalogue shipped with the package. */
export const BUILTIN_CATALOGUE: ModelCatalogue = build(
  BUILTIN_FILE.date,
  BUILTIN_ROWS,
  BUILTIN_FILE.modifiers ?? DEFAULT_MODIFIERS,
  'built-in model catalogue',
);

/**
 * Merge a user file (parsed JSON) over the built-in catalogue: a row whose id is built in is
 * merged over the built-in row field by field (the fields it gives replace the built-in ones,
 * `constraints` key by key; so a row with only `prices` keeps the built-in minimum cacheable
 * length, context window and aliases), new ids are added, `replace: true` drops the built-in
 * rows. The result carries the user file's date.
 */
export function mergeCatalogue(override: unknown, source = 'model table'): ModelCatalogue {
  const replace = (override as { replace?: unknown } | null)?.replace === true;
  const file = parseCatalogueFile(override, source, (id) => !replace && BUILTIN_RAW.has(id));
  const byId = new Map(file.replace ? [] : BUILTIN_ROWS.map((row) => [row.id, row] as const));
  const raws = (override as { models: Record<string, unknown>[] }).models;
  const own = fileSource(file, source);
  file.models.forEach((row, i) => {
    const builtin = byId.get(row.id) && BUILTIN_RAW.get(row.id);
    const raw = raws[i]!;
    if (!builtin) return void byId.set(row.id, sourced(row, own));
    const merged = mergeRow(builtin, raw, `models[${i}] (${row.id})`, source);
    // new prices without a source of their own are the user file's, not the built-in page's
    const priced = raw['prices'] !== undefined && raw['source'] === undefined;
    byId.set(row.id, priced ? { ...merged, source: own } : sourced(merged, own));
  });
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
