import { pct, textTable, usd } from './format.ts';
import { priceSourceLine } from './estimate-format.ts';
import type { EconomicsResult } from './types.ts';

/**
 * Current models side by side for one fan-out shape: per-child cost, the fork against no cache
 * and fresh agents, and both savings on the shared prefix — the children alone (fork-side)
 * and with the parent's own write counted (all-in).
 */
export function formatComparison(results: readonly EconomicsResult[]): string {
  const first = results[0];
  if (!first) return 'no current model in the catalogue\n';
  const state =
    first.cachedPrefixTokens === first.prefixTokens && first.prefixTokens > 0
      ? 'warm'
      : first.cachedPrefixTokens === 0
        ? 'cold'
        : 'partly cached';
  const header = [
    `forkcache economics --compare: current models (catalogue of ${first.modelTableDate}, prices of ${first.date}), convention ${first.convention}; the first request of each child only (input tokens)`,
    `prefix ${first.prefixTokens.toLocaleString('en-US')}, directive ${first.directiveTokens.toLocaleString('en-US')}, ${first.children} children, TTL ${first.ttl}, parent cache ${state}`,
    '',
  ];
  const rows = [
    [
      'model',
      'read x',
      'band',
      'child 1',
      'later child',
      'fork',
      'no cache',
      'fresh agents',
      'fork-side saved',
      'all-in saved',
      'vs no cache',
    ],
  ];
  for (const r of results) {
    const later = r.perChild[r.perChild.length - 1];
    rows.push([
      r.model,
      String(r.readMultiplier),
      r.band ?? '-',
      usd(r.perChild[0]?.usd ?? 0),
      usd(later?.usd ?? 0),
      usd(r.fork.usd),
      usd(r.noCache.usd),
      usd(r.freshAgents.usd),
      pct(r.forkSideSavings),
      pct(r.allInSavings),
      pct(r.savingsVsNoCache),
    ]);
  }
  const notes = [
    '',
    'prices:',
    ...results.map((r) => `  ${priceSourceLine(r)}`),
    "fork-side: the children's cost of the shared prefix against sending it uncached (1 - read multiplier when the parent is warm);",
    "all-in: the same with the parent's last request counted (its write of the prefix at the write price, or uncached when cold).",
  ];
  return `${[...header, ...textTable(rows), ...notes].join('\n')}\n`;
}
