import { ForkcacheError } from '../util/errors.ts';
import { BUILTIN_CATALOGUE, findModel, type ModelCatalogue, type ModelEntry } from './catalogue.ts';
import type { ModelStatus } from './schema.ts';

const DAY_MS = 86_400_000;
let lastDay = { start: Number.NaN, text: '' };

/** `at` (epoch ms) as a UTC date `YYYY-MM-DD`, the form catalogue dates are written in. */
export function isoDay(at: number): string {
  // Pricing asks this several times per request (a proxy prices every exchange it sees), and
  // the answer changes once a day: formatting a Date each time is most of a price lookup.
  const start = Math.floor(at / DAY_MS) * DAY_MS;
  if (start !== lastDay.start) lastDay = { start, text: new Date(at).toISOString().slice(0, 10) };
  return lastDay.text;
}

/** A deprecated model is retired from its end-of-life date on. */
export function statusAt(entry: ModelEntry, at: number): ModelStatus {
  if (entry.status === 'deprecated' && entry.endOfLife !== null && isoDay(at) >= entry.endOfLife) return 'retired';
  return entry.status;
}

/** What forkcache makes of a model id before sending anything. */
export interface ModelCheck {
  /** The id as given. */
  model: string;
  /** The catalogue entry, or undefined for an id the catalogue does not know. */
  entry: ModelEntry | undefined;
  status: ModelStatus | 'unknown';
  /** One line for stderr, the summary and the report; null for a current or legacy model. */
  warning: string | null;
}

/** How a user prices a model the catalogue does not know. */
export const PRICING_HINT =
  'price it with --model-table FILE (or the plan\'s "modelTable" field): a JSON file { "date": "YYYY-MM-DD", "models": [{ "id", "prices": [{ "effectiveFrom", "inputPerMTok", "outputPerMTok" }] }] } merged over the built-in catalogue';

/**
 * Check a model id against the catalogue at a date. A retired id is refused (`MODEL_RETIRED`,
 * naming the replacement) before any request is sent; a deprecated id and an id the catalogue
 * does not know both run, with one warning. An unknown id is never refused: new models appear
 * every few weeks, and the API is the judge of what it accepts.
 */
export function checkModel(
  id: string,
  options: { catalogue?: ModelCatalogue; at: number; field?: string },
): ModelCheck {
  const check = describeModel(id, options);
  if (check.status === 'retired') {
    const entry = check.entry;
    throw new ForkcacheError('MODEL_RETIRED', check.warning ?? `${id} was retired`, {
      data: { field: options.field ?? 'model', model: id, replacement: entry?.replacement ?? null },
    });
  }
  return check;
}

/** Like `checkModel`, but a retired model is described (with its warning), not refused. */
export function describeModel(
  id: string,
  options: { catalogue?: ModelCatalogue; at: number; field?: string },
): ModelCheck {
  const catalogue = options.catalogue ?? BUILTIN_CATALOGUE;
  const field = options.field ?? 'model';
  const entry = findModel(id, catalogue);
  if (!entry) {
    const warning = `${field}: "${id}" is not in forkcache's model catalogue (${catalogue.date}): it runs, but its cost is not priced (null); ${PRICING_HINT}`;
    return { model: id, entry, status: 'unknown', warning };
  }
  const status = statusAt(entry, options.at);
  if (status === 'retired') {
    const when = entry.endOfLife ? ` on ${entry.endOfLife}` : '';
    return {
      model: id,
      entry,
      status,
      warning: `${field}: "${id}" was retired${when}: requests to it fail; use ${entry.replacement} instead`,
    };
  }
  const warning =
    status === 'deprecated'
      ? `${field}: "${id}" is deprecated: its end of life is ${entry.endOfLife}; use ${entry.replacement} instead`
      : null;
  return { model: id, entry, status, warning };
}
