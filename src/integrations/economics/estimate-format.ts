import { BASELINES_NOTE, savedAgainst } from '../../core/ledger/baseline-words.ts';
import type { RunEstimate } from './estimate-types.ts';

const n = (x: number): string => Math.round(x).toLocaleString('en-US');
const usd = (x: number): string => `$${x.toFixed(x >= 1 ? 2 : 4)}`;

/** Where the prices come from, said beside every figure priced with them. */
export function priceSourceLine(
  e: Pick<RunEstimate, 'model' | 'date' | 'pricesFrom' | 'source'> & { modelTableDate?: string | undefined },
): string {
  const copy = e.source.thirdParty ? ', a third-party copy not checked live' : '';
  const table = e.modelTableDate ? `; catalogue of ${e.modelTableDate}` : '';
  return `prices of ${e.model} on ${e.date} (row from ${e.pricesFrom}; ${e.source.name}, retrieved ${e.source.retrieved}${copy}${table})`;
}

/** The estimate as the terminal shows it: figures first, then what was counted and what was assumed. */
export function formatEstimate(
  e: RunEstimate,
  facts: { title: string; counted: readonly string[]; assumed: readonly string[]; countedLabel?: string },
): string {
  const lines = [
    facts.title,
    `estimate  ${usd(e.cost.usd)} for ${n(e.requests)} requests of ${n(e.forks)} forks${e.warmups > 0 ? ` (${e.warmups} warm-up)` : ''}; per fork ${usd(e.perFork.minUsd)}–${usd(e.perFork.maxUsd)}, mean ${usd(e.perFork.meanUsd)}`,
    `          ${priceSourceLine(e)}`,
    `tokens    ${n(e.tokens.cacheRead)} read from cache, ${n(e.tokens.cacheWrite)} written, ${n(e.tokens.input)} uncached, ${n(e.tokens.output)} output`,
    `cost      reads ${usd(e.cost.cacheRead)}, writes ${usd(e.cost.cacheWrite)}, uncached ${usd(e.cost.input)}, output ${usd(e.cost.output)}`,
    `baselines no cache ${usd(e.noCacheUsd)} (${savedAgainst(e.savingsVsNoCache)}) | fresh agents ${usd(e.freshAgentsUsd)} (${savedAgainst(e.savingsVsFreshAgents)})`,
    `          ${BASELINES_NOTE}`,
    '',
    `${facts.countedLabel ?? 'counted'}:`,
    ...facts.counted.map((c) => `  - ${c}`),
    'assumed:',
    ...facts.assumed.map((a) => `  - ${a}`),
  ];
  return `${lines.join('\n')}\n`;
}
