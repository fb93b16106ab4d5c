import { withoutCredentials } from '../wire/headers.ts';
import type { ManifestEngine } from '../run-dir/manifest.ts';
import type { ForkEngineOptions, ResolvedEngineOptions } from './options.ts';
import type { ExecutableToolName } from '../wire/tool-names.ts';
import type { PermissionPolicy } from '../tools/permissions.ts';
import type { ToolSetChoice } from '../tools/client-tools/types.ts';
import type { WarmStrategy } from './warm-gate.ts';
import { toolFlagsOf } from '../tools/tool-flags.ts';
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
    maxTurns: options.maxTurns,
    maxTokens: options.maxTokens,
    allow: [...options.allow],
    warm: options.warm,
    permissions: options.permissions,
    isolation: options.isolation,
    ...(options.sparseWorktrees ? { sparseWorktrees: true } : {}),
    ...(options.maxWorktrees !== undefined ? { maxWorktrees: options.maxWorktrees } : {}),
    ...(options.repos ? { repos: [...options.repos] } : {}),
    toolLimits: options.toolLimits as Record<string, number>,
    sandbox: options.sandbox,
    ...toolFlagsOf(options),
    turnRetry: options.turnRetry,
    concurrency: options.concurrency,
    ...(options.toolSet !== 'auto' ? { toolSet: options.toolSet } : {}),
    ...(options.denyTools.length > 0 ? { denyTools: [...options.denyTools] } : {}),
    ...(options.maxUsd !== undefined ? { maxUsd: options.maxUsd } : {}),
    ...(options.api.wire === 'responses'
      ? { openaiWire: 'responses' as const, ...(ttl ? { responsesTtl: ttl } : {}) }
      : {}),
  };
}

/**
 * The engine options a resumed run starts from: what `manifestEngine` kept, read back. One
 * place for both directions, so a setting that resume must keep is written and read here only.
 * The spend cap is the caller's: `resume --max-usd` may replace it.
 */
export function engineOptionsOf(engine: ManifestEngine): ForkEngineOptions {
  return {
    headers: engine.headers,
    workspace: engine.workspace,
    maxTurns: engine.maxTurns,
    maxTokens: engine.maxTokens,
    allow: engine.allow as ExecutableToolName[],
    warm: engine.warm as WarmStrategy,
    permissions: engine.permissions as PermissionPolicy,
    isolation: engine.isolation,
    ...(engine.sparseWorktrees ? { sparseWorktrees: true } : {}),
    ...(engine.maxWorktrees ? { maxWorktrees: engine.maxWorktrees } : {}),
    ...(engine.repos ? { repos: engine.repos } : {}),
    toolLimits: engine.toolLimits,
    sandbox: engine.sandbox,
    ...toolFlagsOf(engine),
    ...(engine.turnRetry ? { turnRetry: engine.turnRetry } : {}),
    ...(engine.concurrency ? { concurrency: engine.concurrency } : {}),
    ...(engine.toolSet ? { toolSet: engine.toolSet as ToolSetChoice } : {}),
    ...(engine.denyTools ? { denyTools: engine.denyTools } : {}),
    ...(engine.openaiWire ? { openaiWire: engine.openaiWire } : {}),
    ...(engine.responsesTtl ? { responsesTtl: engine.responsesTtl } : {}),
  };
}
