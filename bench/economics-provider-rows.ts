import type { ProviderCell } from './economics-providers.ts';
import { baselineColumns } from './economics-baseline.ts';

const round = (x: number, digits: number): number => Math.round(x * 10 ** digits) / 10 ** digits;

/** The provider cells as rows of the economics table (savings against the ledger's no-cache baseline of the cell). */
export function providerRows(cells: readonly (ProviderCell & { efficiency: number })[]): Record<string, unknown>[] {
  return cells.map((c) => {
    const noCache = c.noCacheUsd;
    const cost = c.run.summary.cost_usd.actual!;
    return {
      provider: c.provider,
      prefix: `${c.prefix / 1000}K`,
      forks: c.forks,
      strategy: c.arm,
      shared_tokens: c.sharedTokens ?? 'n/a',
      fanout_hit_ratio: round(c.run.summary.cache.fanout_hit_ratio, 3),
      cache_efficiency: round(c.efficiency, 3),
      cost_usd: round(cost, 4),
      fresh_agents_usd: baselineColumns(c.run.summary).fresh_agents_usd ?? 'n/a',
      savings_vs_no_cache: `${(((noCache - cost) / noCache) * 100).toFixed(1)}%`,
      makespan_s: round(c.run.makespanMs / 1000, 2),
    };
  });
}

/** One sentence over the providers: the largest cell they all ran, forkcache against fork-naive. */
export function providerSentence(rows: readonly Record<string, unknown>[]): string {
  const last = rows.at(-1);
  if (!last) return '';
  const providers = [...new Set(rows.map((r) => String(r['provider'])))];
  const parts = providers.map((provider) => {
    const at = (strategy: string): Record<string, unknown> | undefined =>
      rows.find(
        (r) =>
          r['provider'] === provider &&
          r['prefix'] === last['prefix'] &&
          r['forks'] === last['forks'] &&
          r['strategy'] === strategy,
      );
    const fc = at('forkcache');
    const naive = at('fork-naive');
    if (!fc || !naive) return `${provider}: not run`;
    return `${provider} $${Number(fc['cost_usd']).toFixed(4)} (${String(fc['savings_vs_no_cache'])} below no cache, efficiency ${String(fc['cache_efficiency'])}) against $${Number(naive['cost_usd']).toFixed(4)} (${String(naive['savings_vs_no_cache'])}, ${String(naive['cache_efficiency'])})`;
  });
  return `At ${String(last['forks'])} forks over ${String(last['prefix'])}, forkcache against fork-naive: ${parts.join('; ')}.`;
}
