import type { ModelCatalogue } from '../../core/models/catalogue.ts';
import { BASELINES_NOTE, savedAgainst } from '../../core/ledger/baseline-words.ts';
import type { Assumptions } from './estimate-profile.ts';
import { priceSourceLine } from './estimate-format.ts';
import { textTable } from './format.ts';
import { wholeRunEconomics } from './run.ts';
import { forkEconomics } from './economics.ts';
import { sweepPoints, type Sweep } from './sweep.ts';
import type { EconomicsTtl } from './types.ts';

/** The fan-out every point of a sweep starts from (the flags), before the swept values replace some. */
interface SweepBase {
  model: string;
  prefix: number;
  forks: number;
  directive: number;
  'file-tokens': number;
  'fresh-tokens': number;
  [key: string]: unknown;
}

/** One point of a sweep: the shape, the three strategies, and where the prices come from. */
export interface SweepRow {
  model: string;
  prefix: number;
  forks: number;
  directive: number;
  /** Tokens each child reads (whole-run mode); null in first-request mode. */
  file_tokens: number | null;
  fresh_tokens: number;
  mode: 'first-request' | 'whole-run';
  requests: number | null;
  fork_usd: number;
  no_cache_usd: number;
  fresh_agents_usd: number;
  savings_vs_no_cache: number | null;
  savings_vs_fresh_agents: number | null;
  prices_date: string;
  prices_from: string;
  price_source: string;
  prices_retrieved: string;
  third_party: boolean;
}

interface SweepOptions {
  table: ModelCatalogue;
  date?: string | undefined;
  wholeRun: boolean;
  kind: 'edit' | 'read';
  assumptions: Assumptions;
  warmParent: boolean;
  ttl: EconomicsTtl;
  maxTokens: number;
}

/** Price every point of the sweep with the estimator (whole run) or the first-request economics. */
export function sweepRows(base: SweepBase, sweep: Sweep, o: SweepOptions): SweepRow[] {
  const keys = {
    model: 'model',
    prefix: 'prefix',
    forks: 'forks',
    directive: 'directive',
    'file-tokens': 'file-tokens',
    'fresh-tokens': 'fresh-tokens',
  } as const;
  return sweepPoints(base, sweep, keys).map((p) => {
    const shape = {
      model: p.model,
      prefix: p.prefix,
      forks: p.forks,
      directive: p.directive,
      fresh_tokens: p['fresh-tokens'],
    };
    if (o.wholeRun) {
      const e = wholeRunEconomics({
        prefixTokens: p.prefix,
        directiveTokens: p.directive,
        children: p.forks,
        model: p.model,
        table: o.table,
        date: o.date,
        freshTokens: p['fresh-tokens'],
        fileTokens: p['file-tokens'],
        kind: o.kind,
        cachedPrefixTokens: o.warmParent ? p.prefix : 0,
        assumptions: o.assumptions,
        maxTokens: o.maxTokens,
      });
      return {
        ...shape,
        model: e.model,
        file_tokens: p['file-tokens'],
        mode: 'whole-run' as const,
        requests: e.requests,
        fork_usd: e.cost.usd,
        no_cache_usd: e.noCacheUsd,
        fresh_agents_usd: e.freshAgentsUsd,
        savings_vs_no_cache: e.savingsVsNoCache,
        savings_vs_fresh_agents: e.savingsVsFreshAgents,
        prices_date: e.date,
        prices_from: e.pricesFrom,
        price_source: e.source.name,
        prices_retrieved: e.source.retrieved,
        third_party: e.source.thirdParty,
      };
    }
    const r = forkEconomics(
      {
        prefixTokens: p.prefix,
        directiveTokens: p.directive,
        children: p.forks,
        model: p.model,
        table: o.table,
        freshTokens: p['fresh-tokens'],
        warmParent: o.warmParent,
        ttl: o.ttl,
        ...(o.date !== undefined ? { date: o.date } : {}),
      },
      '--model',
      '--date',
      '--ttl',
    );
    return {
      ...shape,
      model: r.model,
      file_tokens: null,
      mode: 'first-request' as const,
      requests: p.forks,
      fork_usd: r.fork.usd,
      no_cache_usd: r.noCache.usd,
      fresh_agents_usd: r.freshAgents.usd,
      savings_vs_no_cache: r.savingsVsNoCache,
      savings_vs_fresh_agents: r.savingsVsFreshAgents,
      prices_date: r.date,
      prices_from: r.pricesFrom,
      price_source: r.source.name,
      prices_retrieved: r.source.retrieved,
      third_party: r.source.thirdParty,
    };
  });
}

const k = (n: number): string =>
  n >= 1e6 && n % 1e5 === 0 ? `${n / 1e6}M` : n >= 1e3 && n % 100 === 0 ? `${n / 1e3}K` : n.toLocaleString('en-US');
const usd = (x: number): string => `$${x.toFixed(x >= 10 ? 2 : 4)}`;

/** What a sweep's figures are, in one line: the mode and what it counts. */
export function sweepModeLine(rows: readonly SweepRow[]): string {
  return rows[0]?.mode === 'whole-run'
    ? `whole run: every turn of every fork (read its file, edit, re-read, report), by the estimator forkcache run --dry-run uses`
    : 'first request of each child only (input tokens; the turns after it are not priced: --whole-run prices every turn)';
}

/** The sweep as a table, with the price sources and the baselines said under it. */
export function formatSweep(rows: readonly SweepRow[]): string {
  const models = [...new Set(rows.map((r) => r.model))];
  const header = ['prefix', 'forks', 'fork', 'no cache', 'fresh agents', 'vs no cache', 'vs fresh agents'];
  const table = [
    models.length > 1 ? ['model', ...header] : header,
    ...rows.map((r) => {
      const cells = [
        k(r.prefix),
        String(r.forks),
        usd(r.fork_usd),
        usd(r.no_cache_usd),
        usd(r.fresh_agents_usd),
        savedAgainst(r.savings_vs_no_cache),
        savedAgainst(r.savings_vs_fresh_agents),
      ];
      return models.length > 1 ? [r.model, ...cells] : cells;
    }),
  ];
  const sources = models.map((m) => {
    const r = rows.find((x) => x.model === m)!;
    const source = { name: r.price_source, retrieved: r.prices_retrieved, thirdParty: r.third_party };
    return `  ${priceSourceLine({ model: m, date: r.prices_date, pricesFrom: r.prices_from, source })}`;
  });
  return `${[`forkcache economics --sweep: ${sweepModeLine(rows)}`, '', ...textTable(table), '', 'prices:', ...sources, `baselines: ${BASELINES_NOTE}`].join('\n')}\n`;
}

/** The rows as CSV (RFC 4180: a field with a comma, quote or newline is quoted). */
export function sweepCsv(rows: readonly SweepRow[]): string {
  const cols = Object.keys(rows[0] ?? {}) as (keyof SweepRow)[];
  const cell = (v: unknown): string => {
    const text = v === null ? '' : String(v);
    return /[",\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
  };
  return `${[cols.join(','), ...rows.map((r) => cols.map((c) => cell(r[c])).join(','))].join('\n')}\n`;
}
