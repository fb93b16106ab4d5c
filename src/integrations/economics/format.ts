import type { EconomicsResult } from './types.ts';
import { priceSourceLine } from './estimate-format.ts';

const int = new Intl.NumberFormat('en-US', { maximumFractionDigits: 3 });

function tok(n: number): string {
  return int.format(n);
}

export function usd(n: number): string {
  return `$${n.toFixed(6)}`;
}

export function pct(fraction: number | null): string {
  return fraction === null ? 'n/a' : `${(fraction * 100).toFixed(2)}%`;
}

export function textTable(rows: string[][], textLast = false): string[] {
  const widths = rows[0]?.map((_, col) => Math.max(...rows.map((r) => (r[col] ?? '').length))) ?? [];
  const last = widths.length - 1;
  // Labels (first column) and remarks (a last column of text) left-aligned, numbers right-aligned.
  const left = (col: number): boolean => col === 0 || (textLast && col === last);
  return rows.map((r) =>
    r
      .map((cell, col) => (left(col) ? cell.padEnd(widths[col] ?? 0) : cell.padStart(widths[col] ?? 0)))
      .join('  ')
      .trimEnd(),
  );
}

function savedBy(fraction: number | null): string {
  if (fraction === null) return 'n/a';
  return fraction >= 0 ? `fork saves ${pct(fraction)}` : `fork costs ${pct(-fraction)} more`;
}

/**
 * The write price the children paid, as a multiple of the input price, read back from the
 * writing child's cost: 1.25x (5m) and 2x (1h) on Anthropic and DashScope, 1x where writes are
 * free (OpenAI's automatic cache).
 */
function writeMultiplierOf(r: EconomicsResult): number | undefined {
  const writer = r.perChild.find((c) => c.cacheWriteTokens > 0);
  if (!writer) return undefined;
  return (
    (writer.tokenEquivalents - writer.inputTokens - writer.cacheReadTokens * r.readMultiplier) / writer.cacheWriteTokens
  );
}

function conventionTitle(r: EconomicsResult): string {
  if (r.convention === 'seed')
    return 'convention seed (no write premium, reads at 0.1x, as the reference chapter counts)';
  const m = writeMultiplierOf(r);
  const ttl = `${r.ttl} TTL`;
  if (m === undefined) {
    // no write in this fan-out: the Messages API's multipliers, or the Responses rate it would take
    const rate = { '5m': '1.25x', '1h': '2x', '30m': 'the 5-minute rate', '12h': 'the 1-hour rate' }[r.ttl];
    return `convention real (writes at ${rate} (${ttl}))`;
  }
  return `convention real (writes at ${Number(m.toFixed(2))}x (${ttl}))`;
}

/** Render one or more results (same inputs, different conventions) as a plain-text report. */
export function formatEconomics(results: readonly EconomicsResult[]): string {
  const first = results[0];
  if (!first) return '';
  const state =
    first.cachedPrefixTokens === first.prefixTokens && first.prefixTokens > 0
      ? 'warm'
      : first.cachedPrefixTokens === 0
        ? 'cold'
        : `${tok(first.cachedPrefixTokens)} tokens cached`;
  const lines = [
    `forkcache economics: ${first.model}${first.band ? ` (band ${first.band})` : ''}, the first request of each child only: input tokens, none of the turns after it (--whole-run prices every turn)`,
    `  ${priceSourceLine({ ...first, modelTableDate: first.modelTableDate })}`,
    `prefix ${tok(first.prefixTokens)}, directive ${tok(first.directiveTokens)}, ${first.children} children, TTL ${first.ttl}, parent cache ${state}`,
    `fresh agent = ${tok(first.freshTokens)} system+tools + ${tok(first.directiveTokens)} directive: ${
      results.some((r) => r.convention === 'real')
        ? 'cached as forks are (the first writes the system prompt and tools, the others read them)'
        : ''
    }${results.length > 1 ? '; under seed: ' : ''}${results.some((r) => r.convention === 'seed') ? 'full price, no sharing, as the reference chapter counts them' : ''}`,
  ];
  if (!first.cacheable) lines.push("note: the prefix is below the model's minimum cacheable length: nothing is cached");
  for (const r of results) {
    lines.push('', conventionTitle(r));
    const childRows = [['children', 'read', 'write', 'input', 'token-eq each', 'USD each']];
    for (const c of r.perChild) {
      childRows.push([
        c.children,
        tok(c.cacheReadTokens),
        tok(c.cacheWriteTokens),
        tok(c.inputTokens),
        tok(c.tokenEquivalents),
        usd(c.usd),
      ]);
    }
    lines.push(...textTable(childRows).map((l) => `  ${l}`), '');
    lines.push(
      ...textTable(
        [
          ['strategy', 'token-eq', 'USD', ''],
          ['fork', tok(r.fork.tokenEquivalents), usd(r.fork.usd), ''],
          [
            'fresh agents',
            tok(r.freshAgents.tokenEquivalents),
            usd(r.freshAgents.usd),
            savedBy(r.savingsVsFreshAgents),
          ],
          ['no cache', tok(r.noCache.tokenEquivalents), usd(r.noCache.usd), savedBy(r.savingsVsNoCache)],
        ],
        true,
      ).map((l) => `  ${l}`),
    );
    const n = (v: number | null): string => (v === null ? 'never' : String(v));
    lines.push(
      `  break-even N: vs no cache ${n(r.breakEven.vsNoCache)}, vs fresh agents ${n(r.breakEven.vsFreshAgents)}`,
    );
    lines.push(
      `  shared prefix saved: fork-side ${pct(r.forkSideSavings)} (children alone, read ${r.readMultiplier}x), all-in ${pct(r.allInSavings)} (parent's write included)`,
    );
  }
  return `${lines.join('\n')}\n`;
}
