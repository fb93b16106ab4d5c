import { costUsd, nanoToUsd, noCacheNano } from '../../../core/ledger/cost.ts';
import { creationSplit, type Usage } from '../../../core/ledger/usage.ts';
import { findModel, type ModelCatalogue } from '../../../core/models/catalogue.ts';

/** Cost of one request, and without any caching; null for a model the catalogue cannot price. */
export function priceOf(
  usage: Usage,
  model: string,
  at: number,
  catalogue: ModelCatalogue,
): { cost: number | null; noCache: number | null } {
  const info = findModel(model, catalogue);
  if (!info || info.prices.length === 0) return { cost: null, noCache: null };
  return {
    cost: costUsd(usage, info, { at, catalogue })?.total ?? null,
    noCache: nanoToUsd(noCacheNano(usage, info, at, catalogue)),
  };
}

/**
 * What `tokens` of this request's cache reads would have cost as 5-minute writes instead: the
 * counterfactual of a fix that let it read them (a held sibling would have missed and written
 * the shared prefix at its own marker). 0 when unpriced.
 */
export function readSavedUsd(
  usage: Usage,
  tokens: number,
  model: string,
  at: number,
  catalogue: ModelCatalogue,
): number {
  const moved = Math.min(tokens, usage.cache_read_input_tokens);
  if (moved <= 0) return 0;
  const split = creationSplit(usage);
  const without: Usage = {
    ...usage,
    cache_read_input_tokens: usage.cache_read_input_tokens - moved,
    cache_creation_input_tokens: usage.cache_creation_input_tokens + moved,
    cache_creation: {
      ephemeral_5m_input_tokens: split.ephemeral_5m_input_tokens + moved,
      ephemeral_1h_input_tokens: split.ephemeral_1h_input_tokens,
    },
  };
  const actual = priceOf(usage, model, at, catalogue).cost;
  const counterfactual = priceOf(without, model, at, catalogue).cost;
  return actual === null || counterfactual === null ? 0 : Math.max(0, counterfactual - actual);
}
