import { describe, expect, it } from 'vitest';
import { UsageLedger } from '../../../src/core/ledger/ledger.ts';
import type { LedgerRecordInput } from '../../../src/core/ledger/records.ts';

const SONNET = 'claude-sonnet-4-6';

function rec(
  partial: Partial<LedgerRecordInput> & Pick<LedgerRecordInput, 'forkId' | 'kind' | 'usage'>,
): LedgerRecordInput {
  return { turn: 0, model: SONNET, at: 0, ...partial };
}

/**
 * Three levels, mixed models, a fresh agent in the middle:
 *   root (parent, Sonnet 4.5)       1,000 in, 100 out            → $0.003 + $0.0015           = $0.0045
 *   ├─ f1 (fork, Sonnet 4.5)        2,000 5m writes, 200 out     → $0.0075 + $0.003           = $0.0105
 *   └─ fresh1 (fresh, Sonnet 4.5)   500 in, 50 out               → $0.0015 + $0.00075         = $0.00225
 *      └─ g1 (fork, Haiku 4.5)      100 in, 10,000 read, 10 out  → $0.0001 + $0.001 + $0.00005 = $0.00115
 * fresh1's subtree = $0.0034; root's subtree = $0.0045 + $0.0105 + $0.0034 = $0.0184.
 */
function threeLevels(): UsageLedger {
  const ledger = new UsageLedger();
  ledger.record(rec({ forkId: 'root', kind: 'parent', usage: { input_tokens: 1_000, output_tokens: 100 } }));
  ledger.record(
    rec({
      forkId: 'f1',
      parentId: 'root',
      kind: 'fork',
      usage: { cache_creation_input_tokens: 2_000, output_tokens: 200 },
    }),
  );
  ledger.record(
    rec({ forkId: 'fresh1', parentId: 'root', kind: 'fresh', usage: { input_tokens: 500, output_tokens: 50 } }),
  );
  ledger.record(
    rec({
      forkId: 'g1',
      parentId: 'fresh1',
      kind: 'fork',
      model: 'claude-haiku-4-5-20251001',
      usage: { input_tokens: 100, cache_read_input_tokens: 10_000, output_tokens: 10 },
    }),
  );
  return ledger;
}

describe('UsageLedger roll-up', () => {
  it("includes every descendant's usage in a parent's totals, fresh agents and depth 3 included", () => {
    const ledger = threeLevels();
    expect(ledger.totals('g1').subtree.cost?.total).toBe(0.00115);
    expect(ledger.totals('fresh1').own.cost?.total).toBe(0.00225);
    expect(ledger.totals('fresh1').subtree.cost?.total).toBe(0.0034);
    const root = ledger.totals('root');
    expect(root.own.cost?.total).toBe(0.0045);
    expect(root.subtree.cost?.total).toBe(0.0184);
    expect(root.subtree.requests).toBe(4);
    expect(root.subtree.usage).toEqual({
      input_tokens: 1_600,
      cache_creation_input_tokens: 2_000,
      cache_read_input_tokens: 10_000,
      output_tokens: 360,
    });
    expect(root.children).toEqual(['f1', 'fresh1']);
    expect(ledger.totals('fresh1')).toMatchObject({ kind: 'fresh', parentId: 'root', children: ['g1'] });
  });

  it('summarises the whole tree and any subtree', () => {
    const ledger = threeLevels();
    const all = ledger.summary();
    expect(all.usage).toMatchObject({
      input_tokens: 1_600,
      cache_creation_input_tokens: 2_000,
      cache_read_input_tokens: 10_000,
      output_tokens: 360,
    });
    expect(all.cost_usd.actual).toBe(0.0184);
    expect(all.agents).toEqual({ parent: 1, fork: 2, fresh: 1 });
    expect(ledger.summary('fresh1')).toMatchObject({ root: 'fresh1', requests: 2, cost_usd: { actual: 0.0034 } });
    expect(JSON.parse(JSON.stringify(all))).toEqual(all);
  });

  it('counts fork statuses, including a fork that failed before its first request', () => {
    const ledger = threeLevels();
    ledger.setStatus('f1', 'completed');
    ledger.setStatus('f1', 'completed'); // repeating a terminal status is a no-op
    ledger.setStatus('f2', 'failed', { parentId: 'root' });
    ledger.setStatus('f3', 'cancelled', { parentId: 'root' });
    ledger.setStatus('fresh1', 'completed');
    ledger.setStatus('f4', 'not_done', { parentId: 'root' });
    expect(ledger.summary().forks).toEqual({
      total: 5,
      running: 1,
      completed: 1,
      not_done: 1,
      truncated: 0,
      check_failed: 0,
      invalid_output: 0,
      no_change: 0,
      capped: 0,
      failed: 1,
      cancelled: 1,
    });
    expect(ledger.totals('root').children).toEqual(['f1', 'fresh1', 'f2', 'f3', 'f4']);
    expect(() => ledger.setStatus('f1', 'failed')).toThrow(expect.objectContaining({ code: 'LEDGER_INVALID_STATUS' }));
    expect(() => ledger.setStatus('f1', 'bogus' as never)).toThrow(/status: expected one of/);
  });
});

describe('UsageLedger bad records', () => {
  const bad = (input: unknown): unknown => {
    try {
      threeLevels().record(input as LedgerRecordInput);
    } catch (err) {
      return err;
    }
    throw new Error('expected the record to be rejected');
  };

  it.each([
    ['usage.input_tokens', rec({ forkId: 'x', kind: 'parent', usage: { input_tokens: -5 } })],
    ['usage.cache_read_input_tokens', rec({ forkId: 'x', kind: 'parent', usage: { cache_read_input_tokens: 2.5 } })],
    ['model', rec({ forkId: 'x', kind: 'parent', model: '', usage: {} })],
    ['turn', rec({ forkId: 'x', kind: 'parent', turn: -1, usage: {} })],
    ['sharedPrefixTokens', rec({ forkId: 'x', kind: 'fork', usage: {}, sharedPrefixTokens: -1 })],
    [
      'cachedPrefixTokens',
      rec({ forkId: 'x', kind: 'fork', usage: {}, sharedPrefixTokens: 10, cachedPrefixTokens: 11 }),
    ],
    ['kind', rec({ forkId: 'x', kind: 'child' as never, usage: {} })],
    ['kind', rec({ forkId: 'f1', kind: 'fresh', usage: {} })],
    ['kind', rec({ forkId: 'f1', kind: 'warmup', usage: {} })],
    ['parentId', rec({ forkId: 'g1', parentId: 'root', kind: 'fork', usage: {} })],
    ['parentId', rec({ forkId: 'root', parentId: 'g1', kind: 'parent', usage: {} })],
    ['at', rec({ forkId: 'x', kind: 'parent', usage: {}, at: Number.NaN })],
  ])('names %s', (field, input) => {
    expect(bad(input)).toMatchObject({ name: 'ForkcacheError', code: 'LEDGER_INVALID_RECORD', data: { field } });
    expect((bad(input) as Error).message).toContain(field);
  });

  it('leaves the ledger unchanged after a rejected record', () => {
    const ledger = threeLevels();
    const before = ledger.summary();
    expect(() =>
      ledger.record(rec({ forkId: 'root', parentId: 'g1', kind: 'parent', usage: { input_tokens: 1 } })),
    ).toThrow();
    expect(ledger.summary()).toEqual(before);
    expect(ledger.records()).toHaveLength(4);
  });

  it('rejects unknown fork ids and bad options', () => {
    expect(() => threeLevels().totals('nope')).toThrow(expect.objectContaining({ code: 'LEDGER_UNKNOWN_FORK' }));
    expect(() => threeLevels().summary('nope')).toThrow(/unknown fork id "nope"/);
    expect(() => new UsageLedger({ defaultFreshInputTokens: -1 })).toThrow(/defaultFreshInputTokens/);
  });
});
