import type { ModelCatalogue, ModelEntry, TierRates } from '../../core/models/catalogue.ts';
import { findModel } from '../../core/models/catalogue.ts';
import { priceRowAt, pricedOn, readMultiplier } from '../../core/models/pricing.ts';
import type { ModelStatus } from '../../core/models/schema.ts';
import { isoDay, statusAt } from '../../core/models/status.ts';

/**
 * What `forkcache models` shows: the catalogue at one date, and optionally what an endpoint's
 * `GET /v1/models` lists beside it. Plain data in the `--json` shape; models-table.ts prints it.
 */

/** USD per million tokens. */
export interface RatesView {
  input_per_mtok: number;
  output_per_mtok: number;
  cache_write_5m_per_mtok: number;
  cache_write_1h_per_mtok: number;
  cache_read_per_mtok: number;
}

export interface BandView extends RatesView {
  name: string;
  /** The band holds requests whose prompt is at most this many tokens; null on the last band. */
  up_to_prompt_tokens: number | null;
  read_multiplier: number;
}

export interface ModelView {
  id: string;
  aliases: readonly string[];
  status: ModelStatus;
  end_of_life: string | null;
  replacement: string | null;
  /** The row in force at the date (a banded model: its first band); null when retired. */
  prices: (RatesView & { effective_from: string; fast: RatesView | null }) | null;
  read_multiplier: number | null;
  /** Each prompt-length band of the row in force; null for an unbanded model. */
  bands: BandView[] | null;
  min_cacheable_tokens: number;
  context_window: number;
  max_output_tokens: number;
  /** Where the prices come from and the date of that copy (`third_party`: not checked live). */
  price_source: { name: string; retrieved: string; third_party: boolean };
  note: string | null;
}

export interface ModelsView {
  /** The catalogue's date (a merged `--model-table` file's date). */
  date: string;
  /** The date status and prices are taken at. */
  as_of: string;
  models: ModelView[];
  /** Retired models left out (without `--retired`). */
  hidden_retired: number;
  /** Models left out because their first price row starts after the date (they did not exist yet). */
  hidden_later: number;
}

function rates(t: TierRates): RatesView {
  return {
    input_per_mtok: t.inputPerMTok,
    output_per_mtok: t.outputPerMTok,
    cache_write_5m_per_mtok: t.cacheWrite5mPerMTok,
    cache_write_1h_per_mtok: t.cacheWrite1hPerMTok,
    cache_read_per_mtok: t.cacheReadPerMTok,
  };
}

function modelView(entry: ModelEntry, at: number): ModelView {
  const status = statusAt(entry, at);
  // A retired model has no prices in force: requests to it fail, whatever it last cost.
  const row = status === 'retired' ? undefined : priceRowAt(entry, at);
  const first = row?.tiers[0];
  const banded = row !== undefined && row.tiers.length > 1;
  return {
    id: entry.id,
    aliases: entry.aliases,
    status,
    end_of_life: entry.endOfLife,
    replacement: entry.replacement,
    prices:
      row && first
        ? { effective_from: row.effectiveFrom, ...rates(first), fast: first.fast ? rates(first.fast) : null }
        : null,
    read_multiplier: first ? readMultiplier(first) : null,
    bands: banded
      ? row.tiers.map((t) => ({
          name: t.name ?? '',
          up_to_prompt_tokens: t.upToPromptTokens,
          ...rates(t),
          read_multiplier: readMultiplier(t),
        }))
      : null,
    min_cacheable_tokens: entry.minCacheableTokens,
    context_window: entry.contextWindow,
    max_output_tokens: entry.maxOutputTokens,
    price_source: { name: entry.source.name, retrieved: entry.source.retrieved, third_party: entry.source.thirdParty },
    note: entry.note,
  };
}

/**
 * The catalogue at `at` (epoch ms), in its own order: only models that existed on that day
 * (a retired model has no prices and existed before; a priced one from its first row on),
 * retired ones only with `all`.
 */
export function catalogueView(catalogue: ModelCatalogue, at: number, all: boolean): ModelsView {
  const existing = catalogue.models.filter((entry) => entry.prices.length === 0 || pricedOn(entry, at));
  const models = existing.map((entry) => modelView(entry, at));
  const shown = all ? models : models.filter((m) => m.status !== 'retired');
  return {
    date: catalogue.date,
    as_of: isoDay(at),
    models: shown,
    hidden_retired: models.length - shown.length,
    hidden_later: catalogue.models.length - existing.length,
  };
}

/** One model an endpoint lists, and what the catalogue makes of it. */
export interface ApiModelView {
  id: string;
  display_name: string | null;
  lifecycle: string | null;
  /** The catalogue entry it resolves to (an alias resolves to its canonical id), or null. */
  catalogue_id: string | null;
  /** `priced`, `unpriced` (the catalogue does not know it: it runs, cost null) or `retired`. */
  mark: 'priced' | 'unpriced' | 'retired';
}

export interface ApiView {
  base_url: string;
  models: ApiModelView[];
  /** Catalogue models not retired at the date that the endpoint does not list. */
  not_listed: string[];
}

export interface ListedModel {
  id: string;
  display_name?: string | null | undefined;
  lifecycle?: string | null | undefined;
}

/** Set an endpoint's model list beside the catalogue at `at`. */
export function apiView(
  baseURL: string,
  listed: readonly ListedModel[],
  catalogue: ModelCatalogue,
  at: number,
): ApiView {
  const seen = new Set<string>();
  const models = listed.map((m): ApiModelView => {
    const entry = findModel(m.id, catalogue);
    if (entry) seen.add(entry.id);
    const mark = !entry ? 'unpriced' : statusAt(entry, at) === 'retired' ? 'retired' : 'priced';
    return {
      id: m.id,
      display_name: m.display_name ?? null,
      lifecycle: m.lifecycle ?? null,
      catalogue_id: entry?.id ?? null,
      mark,
    };
  });
  const notListed = catalogue.models
    .filter((e) => statusAt(e, at) !== 'retired' && pricedOn(e, at) && !seen.has(e.id))
    .map((e) => e.id);
  return { base_url: baseURL, models, not_listed: notListed };
}
