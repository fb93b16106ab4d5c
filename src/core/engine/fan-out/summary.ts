import type { ForkResult, ForkSummary } from '../../agent/fork-handle.ts';
import type { ForkHostReport } from '../../loop/types.ts';
import type { SandboxReport } from '../../tools/sandbox/report.ts';
import { engineFigures, type EngineSlots } from '../../ledger/engine-figures.ts';
import { findModel } from '../../models/catalogue.ts';
import { describeModel } from '../../models/status.ts';
import type { FrozenPrefix } from '../../prefix/freeze.ts';
import type { FanOutDeps } from './types.ts';
import type { FanOutSummary } from '../../agent/fork-handle.ts';

/**
 * The summary of a settled fan-out: the ledger's (the tree under the agent that fanned out),
 * the prefix, the warm-ups and rate limits; on a local engine also its figures (prefill tokens
 * computed against the limit, the server's times, the slots), and no "not in the catalogue"
 * warning: a local model has no price, its cost is the compute those figures measure.
 */
export function fanOutSummary(run: {
  deps: FanOutDeps;
  prefix: FrozenPrefix;
  results: readonly ForkResult[];
  sharedTokens: number | undefined;
  warmups: number;
  rateLimits: FanOutSummary['rate_limits'];
  slots: EngineSlots | undefined;
  /** Each fork's line, where its bash ran, the spend cap. */
  more: Pick<
    FanOutSummary,
    'fork_results' | 'sandbox' | 'host_sandboxes' | 'spend_cap' | 'refused_tools' | 'require_change'
  >;
}): FanOutSummary {
  const { deps, prefix } = run;
  const ledger = deps.ledger.summary(deps.rootId);
  const local = deps.provider.local;
  const model = prefix.snapshot.model;
  const unpriced =
    local && !findModel(model, deps.ledger.table)
      ? describeModel(model, { catalogue: deps.ledger.table, at: deps.clock.now() }).warning
      : null;
  return {
    ...ledger,
    warnings: ledger.warnings.filter((w) => w !== unpriced),
    prefix: {
      id: prefix.id,
      sha256: prefix.sha256,
      bytes: prefix.byteLength,
      approx_tokens: prefix.approxTokens,
      shared_tokens: run.sharedTokens ?? null,
      drift_events: run.results.filter((r) => r.error?.code === 'FORK_PREFIX_DRIFT').length,
      source: prefix.snapshot.source,
    },
    warmups: run.warmups,
    run_dir: deps.runDir,
    ...run.more,
    rate_limits: run.rateLimits,
    ...(local ? { engine: { ...engineFigures(deps.ledger.records(), prefix.id), slots: run.slots ?? null } } : {}),
  };
}

/** A fork's host as its summary row names it. */
export function hostSummary(host: ForkHostReport): NonNullable<ForkSummary['host']> {
  return { id: host.id, sandbox: host.sandbox?.kind ?? null, clamped: host.clamped };
}

/** Each host's own sandbox report, by host id (the last fork it reported for; null: it ran no command). */
export function hostSandboxes(results: readonly ForkResult[]): Record<string, SandboxReport | null> {
  const hosts: Record<string, SandboxReport | null> = {};
  for (const { host } of results) if (host) hosts[host.id] = host.sandbox ?? hosts[host.id] ?? null;
  return hosts;
}
