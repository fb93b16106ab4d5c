import { withoutCredentials } from '../wire/headers.ts';
import type { ManifestEngine } from '../run-dir/manifest.ts';
import type { ForkEngineOptions, ResolvedEngineOptions } from './options.ts';
import type { ExecutableToolName } from '../wire/tool-names.ts';
import type { PermissionPolicy } from '../tools/permissions.ts';
import { toolFlagsOf } from '../tools/tool-flags.ts';
import { keptSettings, settingsFromManifest } from '../settings/engine-settings.ts';
import type { ResponsesCacheTtl } from '../wire/cache.ts';

/**
 * The settings a run's manifest keeps, so that `resume` runs as safe and as bounded as the
 * first run: no credentials (headers without keys), nothing a resumed run cannot honour.
 * `responses`: the Responses options the fan-out's head was frozen with (its TTL resolved for
 * this fan-out, where the engine says `auto`), so resume re-freezes the same bytes.
 */
export function manifestEngine(
  options: ResolvedEngineOptions,
  responses?: { ttl: ResponsesCacheTtl } | undefined,
): ManifestEngine {
  const ttl = responses?.ttl ?? (options.responsesTtl !== 'auto' ? options.responsesTtl : undefined);
  return {
    workspace: options.workspace,
    headers: withoutCredentials(options.api.headers),
    allow: [...options.allow],
    ...keptSettings(options),
    permissions: options.permissions,
    ...(options.repos ? { repos: [...options.repos] } : {}),
    toolLimits: options.toolLimits as Record<string, number>,
    ...toolFlagsOf(options),
    turnRetry: options.turnRetry,
    ...(options.api.wire === 'responses'
      ? { openaiWire: 'responses' as const, ...(ttl ? { responsesTtl: ttl } : {}) }
      : {}),
  };
}

/**
 * The engine options a resumed run starts from: what `manifestEngine` kept, read back. One
 * place for both directions; a declared setting (`settings/engine-settings.ts`) says there
 * whether resume keeps it, and is written and read by `keptSettings`/`settingsFromManifest`.
 * The spend cap is the caller's: `resume --max-usd` may replace it.
 */
export function engineOptionsOf(engine: ManifestEngine): ForkEngineOptions {
  return {
    headers: engine.headers,
    workspace: engine.workspace,
    allow: engine.allow as ExecutableToolName[],
    ...settingsFromManifest(engine),
    permissions: engine.permissions as PermissionPolicy,
    ...(engine.repos ? { repos: engine.repos } : {}),
    toolLimits: engine.toolLimits,
    ...toolFlagsOf(engine),
    ...(engine.turnRetry ? { turnRetry: engine.turnRetry } : {}),
    ...(engine.openaiWire ? { openaiWire: engine.openaiWire } : {}),
    ...(engine.responsesTtl ? { responsesTtl: engine.responsesTtl } : {}),
  };
}
