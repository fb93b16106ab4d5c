import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { ForkcacheError } from '../util/errors.ts';
import { parseOrThrow } from '../util/validation.ts';
import PRESETS from './presets.json' with { type: 'json' };

/** One model class's limits per minute. */
export interface ClassLimits {
  rpm: number;
  itpm: number;
  otpm: number;
  /** Whether cache reads count toward ITPM (false for every current model; true for a plain `input_tokens_per_minute` workspace limit). */
  cacheReadsCount?: boolean;
}

export const RATE_LIMIT_TIERS = ['start', 'build', 'scale'] as const;
export type RateLimitTier = (typeof RATE_LIMIT_TIERS)[number];

/**
 * A rate-limit table: limits per model class (the catalogue's family; `default` for every
 * other class), and the optional behaviours of the API's enforcement.
 */
export interface RateLimitTable {
  /** Where the table came from (`preset start`, a file name). */
  source: string;
  classes: Record<string, ClassLimits>;
  /**
   * Enforce over a short window: a bucket holds only `windowSeconds` of its minute's budget
   * (60 RPM over 1 s ≈ 1 request a second). Default 60: a full minute's burst.
   */
  windowSeconds: number;
  /**
   * Acceleration limit: in a window of `windowSeconds`, a key may send at most
   * max(`floor`, `factor` × what it sent in the window before); more is `ramp_limit_exceeded`.
   */
  ramp?: { windowSeconds: number; factor: number; floor: number } | undefined;
  /** Monthly spend cap in USD: past it every request is `enforced_spend_limit_reached`. */
  spendLimitUsd?: number | undefined;
}

const limitsSchema = z.strictObject({
  rpm: z.number().positive(),
  itpm: z.number().positive(),
  otpm: z.number().positive(),
  cacheReadsCount: z.boolean().optional(),
});

/** The `--rate-limits FILE` format: a preset to start from (optional), then overrides. */
const rateLimitFileSchema = z.strictObject({
  preset: z.enum(RATE_LIMIT_TIERS).optional(),
  classes: z.record(z.string(), limitsSchema).optional(),
  windowSeconds: z.number().positive().max(60).optional(),
  ramp: z
    .strictObject({
      windowSeconds: z.number().positive(),
      factor: z.number().min(1),
      floor: z.number().int().positive(),
    })
    .optional(),
  spendLimitUsd: z.number().nonnegative().optional(),
});

/** Families whose rows are placeholders (their real tables were not retrieved). */
const PLACEHOLDER_FAMILIES: readonly string[] = PRESETS.placeholders.families;

/** The published table of one tier (Sept 2026), the 5.5 families as labelled placeholders. */
export function presetTable(tier: RateLimitTier): RateLimitTable {
  const rows = PRESETS.tiers[tier] as Record<string, ClassLimits>;
  const classes: Record<string, ClassLimits> = { ...rows };
  for (const family of PLACEHOLDER_FAMILIES) classes[family] = { ...rows['default']! };
  return {
    source: `preset ${tier} (${PRESETS.date}; ${PLACEHOLDER_FAMILIES.join(', ')}: placeholders)`,
    classes,
    windowSeconds: 60,
  };
}

/** A table from the file format (already parsed JSON). */
export function tableFromFile(json: unknown, source: string): RateLimitTable {
  const file = parseOrThrow(rateLimitFileSchema, json, 'INVALID_OPTION', source);
  const base = file.preset
    ? presetTable(file.preset)
    : { classes: {} as Record<string, ClassLimits>, windowSeconds: 60 };
  const classes = { ...base.classes, ...(file.classes as Record<string, ClassLimits> | undefined) };
  if (Object.keys(classes).length === 0)
    throw new ForkcacheError(
      'INVALID_OPTION',
      `${source}: classes: expected limits for at least one model class (or a preset)`,
      { data: { field: 'classes' } },
    );
  return {
    source,
    classes,
    windowSeconds: file.windowSeconds ?? base.windowSeconds,
    ramp: file.ramp,
    spendLimitUsd: file.spendLimitUsd,
  };
}

/** `--rate-limits start|build|scale|FILE`: a preset by name, or a JSON file in the format above. */
export function resolveRateLimits(spec: string, flag = '--rate-limits'): RateLimitTable {
  if ((RATE_LIMIT_TIERS as readonly string[]).includes(spec)) return presetTable(spec as RateLimitTier);
  let text: string;
  try {
    text = readFileSync(spec, 'utf8');
  } catch (err) {
    throw new ForkcacheError(
      'INVALID_OPTION',
      `${flag}: expected ${RATE_LIMIT_TIERS.join(', ')} or a JSON file; cannot read "${spec}": ${(err as Error).message}`,
      { data: { field: flag } },
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new ForkcacheError('INVALID_OPTION', `${flag}: ${spec}: not JSON: ${(err as Error).message}`, {
      data: { field: flag },
    });
  }
  return tableFromFile(json, `${flag} ${spec}`);
}

/** The limits of a model class: its own row, else the table's `default` row; undefined: unlimited. */
export function limitsFor(table: RateLimitTable, family: string): ClassLimits | undefined {
  return table.classes[family] ?? table.classes['default'];
}
