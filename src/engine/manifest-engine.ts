import { withoutCredentials } from '../provider/headers.ts';
import type { ManifestEngine } from '../run-dir/manifest.ts';
import type { ResolvedEngineOptions } from './options.ts';

/**
 * The settings a run's manifest keeps, so that `resume` runs as safe and as bounded as the
 * first run: no credentials (headers without keys), nothing a resumed run cannot honour.
 */
export function manifestEngine(options: ResolvedEngineOptions): ManifestEngine {
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
    network: options.network,
    turnRetry: options.turnRetry,
    concurrency: options.concurrency,
    ...(options.toolSet !== 'auto' ? { toolSet: options.toolSet } : {}),
    ...(options.denyTools.length > 0 ? { denyTools: [...options.denyTools] } : {}),
    ...(options.maxUsd !== undefined ? { maxUsd: options.maxUsd } : {}),
  };
}
