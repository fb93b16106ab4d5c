import type { z } from 'zod';
import {
  ENGINE_SETTINGS,
  type EngineSettingsTable,
  type SettingDecl,
  type SettingName,
  type SettingOptions,
} from '../../core/settings/engine-settings.ts';
import { ForkcacheError } from '../../core/util/errors.ts';

/*
 * The plan fields of the engine's declared settings (`src/core/settings/engine-settings.ts`,
 * `plan`): each a field of its declared path (`sparseWorktrees`, `limits.maxTurns`) with the
 * setting's own schema and help line, read into the engine's options by `planSettings`. A
 * setting declared with a plan field is one: no line to add here or in plan.ts.
 */

type Group = 'limits' | undefined;

type Table = EngineSettingsTable;
type PlanPathOf<K extends SettingName> = Table[K] extends { readonly plan: infer P extends string } ? P : never;
type AliasOf<K extends SettingName> = Table[K] extends { readonly planAliases: readonly (infer A extends string)[] }
  ? A
  : never;
type KeyIn<K extends SettingName, G extends Group> = G extends string
  ? PlanPathOf<K> extends `${G}.${infer Key}`
    ? Key
    : never
  : PlanPathOf<K> extends `${string}.${string}`
    ? never
    : PlanPathOf<K>;
type FieldOf<K extends SettingName, G extends Group> = G extends undefined
  ? Table[K]['default'] extends undefined | readonly unknown[]
    ? z.ZodOptional<Table[K]['schema']>
    : z.ZodDefault<Table[K]['schema']>
  : z.ZodOptional<Table[K]['schema']>;

/** The plan fields of the settings declared in group `G`, each typed by its setting's schema (and its older names). */
type PlanSettingShape<G extends Group> = { [K in SettingName as KeyIn<K, G>]: FieldOf<K, G> } & {
  [K in SettingName as [KeyIn<K, G>] extends [never] ? never : AliasOf<K>]: z.ZodOptional<Table[K]['schema']>;
};

const declared = (): [SettingName, SettingDecl][] =>
  (Object.entries(ENGINE_SETTINGS) as [SettingName, SettingDecl][]).filter(([, s]) => s.plan !== undefined);

/** Where a plan path lives: its group (`limits`) and its key in it. */
function split(path: string): [Group, string] {
  const dot = path.indexOf('.');
  return dot === -1 ? [undefined, path] : [path.slice(0, dot) as Group, path.slice(dot + 1)];
}

/**
 * The plan fields of the settings declared in `group` (top level: undefined). A top-level
 * field with a value as its default shows that default (`forkcache run --help`); the others
 * are optional (absent: the engine's default).
 */
export function planSettingShape<G extends Group>(group: G): PlanSettingShape<G> {
  return Object.fromEntries(
    declared().flatMap(([, s]) => {
      const [where, key] = split(s.plan!);
      if (where !== group) return [];
      const field =
        group === undefined && s.default !== undefined && !Array.isArray(s.default)
          ? s.schema.default(s.default as never)
          : s.schema.optional();
      const aliases = (s.planAliases ?? []).map(
        (old) => [old, s.schema.optional().describe(`deprecated: the old name of ${key}`)] as const,
      );
      return [[key, s.help ? field.describe(s.help) : field] as const, ...aliases];
    }),
  ) as PlanSettingShape<G>;
}

/**
 * Every declared setting the plan gives, as the engine's options; a field under an older name
 * (`sparse`) counts as its declared one. Both names with different values: which one the user
 * meant is unknown, so the plan is refused.
 */
export function planSettings(plan: Readonly<Record<string, unknown>>, path = 'plan'): SettingOptions {
  const at = (group: Group, key: string): unknown =>
    group === undefined ? plan[key] : (plan[group] as Record<string, unknown> | undefined)?.[key];
  return Object.fromEntries(
    declared().flatMap(([name, s]) => {
      const [group, key] = split(s.plan!);
      const value = at(group, key);
      for (const old of s.planAliases ?? []) {
        const older = at(group, old);
        if (older === undefined) continue;
        if (value !== undefined && value !== older && JSON.stringify(value) !== JSON.stringify(s.default))
          throw new ForkcacheError('INVALID_PLAN', `${path}: ${old}: the old name of ${key}; give one of them`, {
            data: { field: old },
          });
        return [[name, older]];
      }
      return value === undefined ? [] : [[name, value]];
    }),
  ) as SettingOptions;
}

/**
 * The parsed plan with every field under an older name (`sparse`) moved to its declared one
 * (`sparseWorktrees`), so the rest of the CLI reads one name.
 */
export function withDeclaredNames<P extends Record<string, unknown>>(plan: P, path = 'plan'): P {
  const settings = planSettings(plan, path) as Record<string, unknown>;
  const out: Record<string, unknown> = { ...plan };
  for (const [name, s] of declared()) {
    const [group, key] = split(s.plan!);
    if (!s.planAliases?.length) continue;
    const target = group === undefined ? out : (out[group] = { ...(out[group] as Record<string, unknown>) });
    for (const old of s.planAliases) delete (target as Record<string, unknown>)[old];
    if (settings[name] !== undefined) (target as Record<string, unknown>)[key] = settings[name];
  }
  return out as P;
}
