import { importOptional, type OptionalFeature } from '../core/util/optional-import.ts';

/**
 * The forkcache module that loads each feature's optional packages. Loading it is the check:
 * the packages resolve, and Node keeps the module for the command's later use. (`ai-sdk` has
 * none: forkcache/ai-sdk imports nothing of the AI SDK, the app does; `check-file` needs none:
 * without its parser it falls back to a word check and says so.)
 */
type Required = Exclude<OptionalFeature, 'ai-sdk' | 'check-file'>;
const LOADERS: Record<Required, () => Promise<unknown>> = {
  report: () => import('../integrations/report/svg-chart.ts'),
  distributed: () => import('../integrations/distributed/submit/backend.ts'),
  mcp: () => import('../integrations/mcp/start.ts'),
};

/**
 * Load the optional packages a command's flags need, before the command starts anything (a
 * server, a pool, a run): a missing one is `DEPENDENCY_MISSING` naming it (exit 1) while there
 * is nothing to close yet. A command that found out after starting its server once kept the
 * socket open and never exited. `false` and `undefined` stand for a flag not given.
 */
export async function requireFeatures(...features: (Required | false | undefined)[]): Promise<void> {
  for (const feature of features) if (feature) await importOptional(feature, LOADERS[feature]);
}
