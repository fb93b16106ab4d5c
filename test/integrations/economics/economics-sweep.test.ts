import { describe, expect, it } from 'vitest';
import { wholeRunEconomics } from '../../../src/integrations/economics/run.ts';
import { parseSweep, sweepPoints } from '../../../src/integrations/economics/sweep.ts';
import { formatSweep, sweepCsv, sweepRows } from '../../../src/integrations/economics/sweep-rows.ts';
import { DEFAULT_ASSUMPTIONS } from '../../../src/integrations/economics/estimate-profile.ts';
import { BUILTIN_CATALOGUE } from '../../../src/core/models/catalogue.ts';

const base = {
  model: 'claude-opus-5-5',
  prefix: 10_000,
  forks: 1,
  directive: 200,
  'file-tokens': 2_000,
  'fresh-tokens': 16_000,
};
const options = {
  table: BUILTIN_CATALOGUE,
  date: '2026-11-30',
  wholeRun: true,
  kind: 'edit' as const,
  assumptions: DEFAULT_ASSUMPTIONS,
  warmParent: false,
  ttl: '5m' as const,
  maxTokens: 8_192,
};

describe('--sweep NAME=VALUES', () => {
  it('ranges double up to their end; lists, K and M suffixes; the grid has forks last', () => {
    expect(parseSweep(['forks=1..64', 'prefix=10K,100K'])).toEqual({
      forks: [1, 2, 4, 8, 16, 32, 64],
      prefix: [10_000, 100_000],
    });
    expect(parseSweep(['forks=3..20 directive=1.5K'])).toEqual({ forks: [3, 6, 12, 20], directive: [1_500] });
    expect(parseSweep(['model=claude-opus-5-5,qwen3-max'])).toEqual({ model: ['claude-opus-5-5', 'qwen3-max'] });
    const points = sweepPoints(base, parseSweep(['forks=1,2', 'prefix=10K,100K']), {
      model: 'model',
      prefix: 'prefix',
      forks: 'forks',
      directive: 'directive',
      'file-tokens': 'file-tokens',
      'fresh-tokens': 'fresh-tokens',
    });
    expect(points.map((p) => [p.prefix, p.forks])).toEqual([
      [10_000, 1],
      [10_000, 2],
      [100_000, 1],
      [100_000, 2],
    ]);
  });

  it('names the spec of every mistake', () => {
    expect(() => parseSweep(['children=1..8'])).toThrow(
      /^--sweep children=1\.\.8: expected NAME=VALUES with NAME one of forks, prefix/,
    );
    expect(() => parseSweep(['forks=8..2'])).toThrow(/^--sweep forks=8\.\.2: a range a\.\.b needs 1 <= a <= b/);
    expect(() => parseSweep(['prefix=lots'])).toThrow(/^--sweep prefix=lots: "lots" is not a number/);
    expect(() => parseSweep(['forks=1', 'forks=2'])).toThrow(/forks is swept twice/);
    expect(() => parseSweep(['forks=1..1000', 'prefix=1..1M', 'directive=1..1K'])).toThrow(/points, at most 2000/);
  });
});

describe('the sweep rows', () => {
  it("each whole-run row is the estimator's figure for that shape, with the price source beside it", () => {
    const rows = sweepRows(base, parseSweep(['forks=1,8', 'prefix=10K,100K']), options);
    expect(rows).toHaveLength(4);
    const direct = wholeRunEconomics({
      prefixTokens: 100_000,
      directiveTokens: 200,
      children: 8,
      model: 'claude-opus-5-5',
      table: BUILTIN_CATALOGUE,
      date: '2026-11-30',
      freshTokens: 16_000,
      fileTokens: 2_000,
      kind: 'edit',
      maxTokens: 8_192,
    });
    expect(rows[3]).toMatchObject({
      prefix: 100_000,
      forks: 8,
      mode: 'whole-run',
      requests: 32,
      fork_usd: direct.cost.usd,
      no_cache_usd: direct.noCacheUsd,
      fresh_agents_usd: direct.freshAgentsUsd,
      prices_date: '2026-11-30',
      prices_from: '2026-10-07',
      prices_retrieved: '2026-11-09',
      third_party: false,
    });
    // fresh agents carry no history: the prefix changes the forks' cost, not theirs
    expect(rows[1]!.fresh_agents_usd).toBe(rows[3]!.fresh_agents_usd);
    const text = formatSweep(rows);
    expect(text).toMatch(/^forkcache economics --sweep: whole run: every turn of every fork/);
    expect(text).toContain(
      "prices of claude-opus-5-5 on 2026-11-30 (row from 2026-10-07; Anthropic's pricing page (a stored copy), retrieved 2026-11-09)",
    );
    expect(text).toContain('fresh agents: each fork replaced by an agent given only the fallback system prompt');
  });

  it('a third-party price list says so; CSV quotes what needs it; first-request mode says what it counts', () => {
    const qwen = sweepRows({ ...base, model: 'qwen3-max' }, parseSweep(['forks=2']), { ...options, wholeRun: false });
    expect(qwen[0]).toMatchObject({ mode: 'first-request', third_party: true, requests: 2 });
    expect(formatSweep(qwen)).toMatch(/a third-party copy not checked live/);
    expect(formatSweep(qwen)).toMatch(/first request of each child only/);
    const csv = sweepCsv(qwen).split('\n');
    expect(csv[0]).toBe(
      'model,prefix,forks,directive,fresh_tokens,file_tokens,mode,requests,fork_usd,no_cache_usd,fresh_agents_usd,savings_vs_no_cache,savings_vs_fresh_agents,prices_date,prices_from,price_source,prices_retrieved,third_party',
    );
    expect(csv[1]).toContain(',DashScope international (Singapore) price list,2026-12-01,true');
    const quoted = sweepCsv([{ ...qwen[0]!, price_source: 'a list, "copied"' }]).split('\n')[1];
    expect(quoted).toContain(',"a list, ""copied""",');
  });
});
