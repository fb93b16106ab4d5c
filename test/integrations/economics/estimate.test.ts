import { describe, expect, it } from 'vitest';
import { cachedTurns } from '../../../src/core/ledger/cache-turns.ts';
import { estimateRun, forkTurns } from '../../../src/integrations/economics/estimate.ts';
import type { EstimateInput } from '../../../src/integrations/economics/estimate-types.ts';
import {
  DEFAULT_ASSUMPTIONS,
  directiveKind,
  parseAssumptions,
  profileFork,
} from '../../../src/integrations/economics/estimate-profile.ts';
import { BUILTIN_CATALOGUE } from '../../../src/core/models/catalogue.ts';

const AT = Date.parse('2026-11-30T12:00:00Z');
// Opus 5.5: in $4/M (4,000 nano a token), 5m write $5/M, read $0.20/M, out $20/M; minimum 512.
const fork = { directiveTokens: 100, turns: [{ label: 'read a.ts', output: 50, result: 1_000 }], reportTokens: 200 };
const input = (extra: Partial<EstimateInput> = {}): EstimateInput => ({
  model: 'claude-opus-5-5',
  table: BUILTIN_CATALOGUE,
  at: AT,
  sharedTokens: 10_000,
  warm: 'first-child',
  freshHeadTokens: 2_000,
  forks: [fork, fork],
  turnOverhead: 10,
  maxTokens: 8_192,
  ...extra,
});

describe("cachedTurns: one agent's requests under the cache rules", () => {
  it('reads what is cached, writes the rest, and leaves a request below the minimum uncached', () => {
    expect(cachedTurns([10_100, 11_160], 10_000, [50, 200], 512)).toEqual([
      { input_tokens: 0, cache_creation_input_tokens: 100, cache_read_input_tokens: 10_000, output_tokens: 50 },
      { input_tokens: 0, cache_creation_input_tokens: 1_060, cache_read_input_tokens: 10_100, output_tokens: 200 },
    ]);
    expect(cachedTurns([300, 700], 0, [1, 2], 512)).toEqual([
      { input_tokens: 300, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1 },
      { input_tokens: 0, cache_creation_input_tokens: 700, cache_read_input_tokens: 0, output_tokens: 2 },
    ]);
  });
});

describe('estimateRun: every turn of every fork', () => {
  it('turns: P + D, then each turn adds its output, its result and the framing', () => {
    expect(forkTurns(fork, 10_000, 10)).toEqual({ inputs: [10_100, 11_160], outputs: [50, 200] });
  });

  /*
   * first-child, P = 10,000, two forks of two requests each (10,100 then 11,160 tokens):
   *   fork 1  write 10,100, out 50     50,500,000 + 1,000,000 = 51,500,000
   *           read 10,100, write 1,060, out 200   2,020,000 + 5,300,000 + 4,000,000 = 11,320,000
   *   fork 2  read 10,000, write 100, out 50       2,000,000 +   500,000 + 1,000,000 =  3,500,000
   *           read 10,100, write 1,060, out 200                                      = 11,320,000
   *   total 77,640,000 nano-dollars = $0.07764
   * no cache: (10,100 + 11,160) × 2 × 4,000 + 500 × 20,000 = 170,080,000 + 10,000,000 = $0.18008
   * fresh agents (F = 2,000): 2,100 then 3,160 tokens
   *   agent 1  write 2,100 (10,500,000) + 1,000,000; read 2,100 (420,000) + write 1,060 (5,300,000) + 4,000,000
   *   agent 2  read 2,000 (400,000) + write 100 (500,000) + 1,000,000; then as agent 1's second
   *   total 11,500,000 + 9,720,000 + 1,900,000 + 9,720,000 = 32,840,000 → $0.03284
   */
  it('prices the hand-worked fan-out exactly, with both baselines', () => {
    const e = estimateRun(input());
    expect(e).toMatchObject({
      model: 'claude-opus-5-5',
      pricesFrom: '2026-10-07',
      date: '2026-11-30',
      forks: 2,
      requests: 4,
      warmups: 0,
      tokens: { input: 0, cacheWrite: 10_100 + 1_060 + 100 + 1_060, cacheRead: 10_100 + 10_000 + 10_100, output: 500 },
      noCacheUsd: 0.18008,
      freshAgentsUsd: 0.03284,
    });
    expect(e.cost.usd).toBe(0.07764);
    expect(e.perFork).toMatchObject({ minUsd: 0.01482, maxUsd: 0.06282, dearest: 0 });
    expect(e.savingsVsFreshAgents).toBeLessThan(0); // the parent's history costs more than it saves here
    expect(e.source).toMatchObject({ name: expect.stringContaining('Anthropic'), thirdParty: false });
    // a request reserves its input at the dearest write price (1h) and max_tokens at the output
    // price, times the largest geography modifier (us 1.1)
    expect(e.requestBoundUsd).toBe((1.1 * (11_160 * 8_000 + 8_192 * 20_000)) / 1e9);
  });

  it('warm strategies: prewarm adds one warm-up and lets every fork read; none lets every fork write P', () => {
    const first = estimateRun(input()).cost.usd;
    const prewarm = estimateRun(input({ warm: 'prewarm' }));
    expect(prewarm).toMatchObject({ warmups: 1, requests: 5 });
    const none = estimateRun(input({ warm: 'none' }));
    expect(none.tokens.cacheWrite).toBe(2 * (10_100 + 1_060));
    expect(none.cost.usd).toBeGreaterThan(first);
    // below the minimum cacheable length nothing is shared
    const tiny = estimateRun(input({ sharedTokens: 100, forks: [{ ...fork, directiveTokens: 10, turns: [] }] }));
    expect(tiny.tokens).toMatchObject({ cacheRead: 0, cacheWrite: 0, input: 110 });
  });

  it('refuses a model it cannot price, and a date before its first price row, naming the field', () => {
    expect(() => estimateRun(input({ model: 'claude-opus-9' }))).toThrow(
      /^model: "claude-opus-9" is not in the model catalogue/,
    );
    expect(() => estimateRun(input({ model: 'claude-sonnet-5-5', at: Date.parse('2026-09-01T00:00:00Z') }))).toThrow(
      /date: 2026-09-01 is before the first price of claude-sonnet-5-5/,
    );
  });
});

describe('profileFork: the turns a directive is assumed to take', () => {
  const file = { path: 'src/big.ts', tokens: 90_000, pages: 2 };
  it('an edit reads every page, edits once, reads again, reports; a read reads and reports', () => {
    const edit = profileFork({ directiveTokens: 40, kind: 'edit', files: [file] });
    expect(edit.turns.map((t) => [t.label, t.output, t.result])).toEqual([
      ['read src/big.ts (1/2)', 60, 45_000],
      ['read src/big.ts (2/2)', 60, 45_000],
      ['edit src/big.ts', 100, 30],
      ['re-read src/big.ts (1/2)', 60, 45_000],
      ['re-read src/big.ts (2/2)', 60, 45_000],
    ]);
    expect(edit.reportTokens).toBe(DEFAULT_ASSUMPTIONS.reportOutput);
    const read = profileFork({ directiveTokens: 40, kind: 'read', files: [{ ...file, pages: 1 }] });
    expect(read.turns.map((t) => t.label)).toEqual(['read src/big.ts']);
    const noVerify = profileFork(
      { directiveTokens: 40, kind: 'edit', files: [file] },
      { ...DEFAULT_ASSUMPTIONS, verifyRead: 0 },
    );
    expect(noVerify.turns).toHaveLength(3);
  });

  it('tells an edit from a read by its verbs (an unclear directive is assumed to edit)', () => {
    expect(directiveKind('rename buildHeaders to mergeHeaders in src/client.ts')).toBe('edit');
    expect(directiveKind('read src/lib/http.ts and report')).toBe('read');
    expect(directiveKind('src/a.ts: make it better')).toBe('edit');
  });

  it('--assume name=value over the defaults; a bad name or value is named', () => {
    expect(parseAssumptions(['reportOutput=400,verifyRead=0']).assumptions).toMatchObject({
      reportOutput: 400,
      verifyRead: 0,
    });
    expect(parseAssumptions(['tokens=3']).error).toMatch(/^unknown assumption "tokens" \(known: toolCallOutput,/);
    expect(parseAssumptions(['editOutput=-1']).error).toBe(
      'editOutput: expected a whole number of tokens up to 1,000,000 (got "-1")',
    );
  });
});

describe('estimateRun: the wire (warm-up output, write lifetime)', () => {
  it('prices every write at its lifetime: 1h and 12h at the long rate, 30m as 5m; a Chat warm-up generates one token', () => {
    const base = estimateRun(input({ warm: 'prewarm' }));
    // Opus 5.5's 1-hour write is 2x the input price, the 5-minute 1.25x: writes cost 8/5 as much
    for (const ttl of ['1h', '12h'] as const) {
      const long = estimateRun(input({ warm: 'prewarm', writeTtl: ttl }));
      expect(long.tokens).toEqual(base.tokens);
      expect(long.cost.cacheWrite).toBeCloseTo((base.cost.cacheWrite * 8) / 5, 9);
      expect(long.cost.cacheRead).toBe(base.cost.cacheRead);
    }
    expect(estimateRun(input({ warm: 'prewarm', writeTtl: '30m' })).cost).toEqual(base.cost);
    const chat = estimateRun(input({ warm: 'prewarm', warmupOutput: 1 }));
    expect(chat.warmups).toBe(1);
    expect(chat.tokens.output).toBe(base.tokens.output + 1);
  });
});
