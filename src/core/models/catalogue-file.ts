import { ForkcacheError } from '../util/errors.ts';
import { formatPath } from '../util/validation.ts';
import { catalogueFileSchema, modelRowSchema, type CatalogueFile, type ModelRow } from './schema.ts';

/*
 * Checking a catalogue file, the built-in one and a user's alike: the schema, then the rules
 * between fields and rows that zod cannot express. Every error names the row and the field.
 */

export function catalogueInvalid(source: string, message: string, field?: string): ForkcacheError {
  return new ForkcacheError('MODEL_CATALOGUE_INVALID', `${source}: ${message}`, { data: field ? { field } : {} });
}

/** The row checks zod cannot express; `where(i)` names the row (`models[3] (claude-x)`). */
function checkRow(row: ModelRow, where: string, source: string): void {
  if (row.status === 'deprecated' && (!row.endOfLife || !row.replacement)) {
    throw catalogueInvalid(source, `${where}: a deprecated model needs endOfLife and replacement`, `${where}.status`);
  }
  if (row.status === 'retired' && !row.replacement)
    throw catalogueInvalid(
      source,
      `${where}.replacement: a retired model needs its replacement`,
      `${where}.replacement`,
    );
  if (row.status !== 'retired' && row.prices.length === 0)
    throw catalogueInvalid(
      source,
      `${where}.prices: a ${row.status} model needs at least one price row`,
      `${where}.prices`,
    );
  row.prices.forEach((price, p) => {
    const prev = row.prices[p - 1];
    if (prev && prev.effectiveFrom >= price.effectiveFrom) {
      throw catalogueInvalid(
        source,
        `${where}.prices[${p}].effectiveFrom: ${price.effectiveFrom} must come after ${prev.effectiveFrom}`,
        `${where}.prices[${p}].effectiveFrom`,
      );
    }
    if (!('bands' in price)) return;
    const tiers = price.bands.tiers;
    tiers.forEach((tier, t) => {
      const field = `${where}.prices[${p}].bands.tiers[${t}].upToPromptTokens`;
      const last = t === tiers.length - 1;
      if (last && tier.upToPromptTokens !== undefined)
        throw catalogueInvalid(source, `${field}: the last tier has no upper bound`, field);
      if (!last && tier.upToPromptTokens === undefined)
        throw catalogueInvalid(source, `${field}: required on every tier but the last`, field);
      const before = tiers[t - 1]?.upToPromptTokens;
      if (before !== undefined && tier.upToPromptTokens !== undefined && tier.upToPromptTokens <= before) {
        throw catalogueInvalid(source, `${field}: must be above the previous tier's ${before}`, field);
      }
    });
  });
}

/** `models[3].prices[0]` → `models[3] (claude-x).prices[0]`: a row is easier to find by its id. */
function nameRow(path: string, models: unknown): string {
  return path.replace(/^models\[(\d+)\]/, (whole, index: string) => {
    const id = Array.isArray(models) ? (models[Number(index)] as { id?: unknown } | undefined)?.id : undefined;
    return typeof id === 'string' ? `${whole} (${id})` : whole;
  });
}

/** ` (got 1e+308)`: the value a bad field holds, when it is a plain value worth showing. */
function given(json: unknown, path: readonly PropertyKey[]): string {
  let value: unknown = json;
  for (const key of path) value = (value as Record<PropertyKey, unknown> | null | undefined)?.[key];
  if (typeof value === 'number' || typeof value === 'boolean') return ` (got ${String(value)})`;
  if (typeof value === 'string' && value.length <= 40) return ` (got ${JSON.stringify(value)})`;
  return '';
}

/**
 * Parse and check a catalogue file (already-parsed JSON). Every error names the row and field.
 * `merged(id)`: the row will be merged over a built-in row, so it may be partial; it is
 * checked whole, once merged (`mergeRow`).
 */
export function parseCatalogueFile(
  json: unknown,
  source: string,
  merged: (id: string) => boolean = () => false,
): CatalogueFile {
  const parsed = catalogueFileSchema.safeParse(json);
  if (!parsed.success) {
    const models = (json as { models?: unknown } | null)?.models;
    const lines = parsed.error.issues.map(
      (issue) => `${nameRow(formatPath(issue.path), models)}: ${issue.message}${given(json, issue.path)}`,
    );
    throw catalogueInvalid(source, lines.join('; '), nameRow(formatPath(parsed.error.issues[0]?.path ?? []), models));
  }
  const file = parsed.data;
  const seen = new Set<string>();
  file.models.forEach((row, i) => {
    if (seen.has(row.id))
      throw catalogueInvalid(source, `models[${i}]: model "${row.id}" is named twice`, `models[${i}].id`);
    seen.add(row.id);
    if (!merged(row.id)) checkRow(row, `models[${i}] (${row.id})`, source);
  });
  return file;
}

/**
 * A user's row over the built-in row of the same id, as written (before defaults): the user's
 * fields replace the built-in ones, `constraints` merges key by key. The result is checked as
 * a row of its own; an error names the user's row and says it was merged.
 */
export function mergeRow(builtin: Record<string, unknown>, user: unknown, where: string, source: string): ModelRow {
  const own = user as Record<string, unknown>;
  const constraints =
    builtin['constraints'] === undefined && own['constraints'] === undefined
      ? {}
      : {
          constraints: {
            ...(builtin['constraints'] as object | undefined),
            ...(own['constraints'] as object | undefined),
          },
        };
  const merged = { ...builtin, ...own, ...constraints };
  const parsed = modelRowSchema.safeParse(merged);
  const label = `${where}, merged over the built-in row`;
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = `${where}.${formatPath(issue?.path ?? [])}`;
    throw catalogueInvalid(source, `${label}: ${formatPath(issue?.path ?? [])}: ${issue?.message ?? 'invalid'}`, field);
  }
  checkRow(parsed.data, label, source);
  return parsed.data;
}
