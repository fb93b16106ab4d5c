import { describe, expect, it } from 'vitest';
import { engineFigures } from '../../../src/core/ledger/engine-figures.ts';
import { UsageLedger } from '../../../src/core/ledger/ledger.ts';

// The figures of a real run against llama-server (docs: local-engines notes): warm-up 0 read /
// 1,443 computed; forks 1,441/193, 1,624/10, 1,625/9 (read/computed), 4 output tokens each.
function notesRun(): UsageLedger {
  const ledger = new UsageLedger();
  const common = { model: 'local-gguf', at: 1_000, prefixId: 'p1' };
  ledger.record({
    ...common,
    forkId: 'parent',
    kind: 'warmup',
    turn: 0,
    usage: { input_tokens: 1443, output_tokens: 1, timings: { prompt_ms: 900, predicted_ms: 10 } },
    sharedPrefixTokens: 1443,
    cachedPrefixTokens: 0,
  });
  ledger.record({
    ...common,
    forkId: 'parent',
    kind: 'warmup',
    turn: 0,
    usage: { input_tokens: 9, output_tokens: 1 },
    sharedPrefixTokens: 0,
  });
  const forks: [number, number][] = [
    [1441, 193],
    [1624, 10],
    [1625, 9],
  ];
  forks.forEach(([read, computed], i) =>
    ledger.record({
      ...common,
      forkId: `f${i}`,
      parentId: 'parent',
      kind: 'fork',
      turn: 0,
      usage: {
        input_tokens: computed,
        cache_read_input_tokens: read,
        output_tokens: 4,
        timings: { prompt_ms: 20, predicted_ms: 40 },
      },
      sharedPrefixTokens: 1443,
    }),
  );
  return ledger;
}

describe('engine figures', () => {
  it('prefill computed against the prefix once plus each fork’s own part, and the server’s times', () => {
    const figures = engineFigures(notesRun().records(), 'p1');
    expect(figures.requests).toBe(5);
    expect(figures.prefill_tokens).toBe(1443 + 9 + 193 + 10 + 9);
    // forks' own parts: what follows the 1,443 shared tokens in each prompt
    expect(figures.prefill_limit).toBe(1443 + (1634 - 1443) + (1634 - 1443) + (1634 - 1443));
    expect(figures.prefill_ratio).toBeCloseTo(figures.prefill_tokens / figures.prefill_limit!, 12);
    expect(figures.prompt_ms).toBe(960);
    expect(figures.predicted_ms).toBe(130);
    expect(figures.timed_requests).toBe(4);
  });

  it('a later turn’s own part is what follows its previous prompt and output (at least one token)', () => {
    const ledger = notesRun();
    const usage = { input_tokens: 1, cache_read_input_tokens: 1640, output_tokens: 3 };
    ledger.record({ forkId: 'f0', kind: 'fork', turn: 1, model: 'local-gguf', at: 2_000, prefixId: 'p1', usage });
    const limit = engineFigures(ledger.records(), 'p1').prefill_limit!;
    // 1,641 - (1,634 + 4) = 3 tokens more than the run without that turn
    expect(limit - engineFigures(notesRun().records(), 'p1').prefill_limit!).toBe(3);
  });

  it('no limit without a measured prefix, no times when the server reported none', () => {
    const ledger = new UsageLedger();
    ledger.record({
      forkId: 'f',
      parentId: 'p',
      kind: 'fork',
      turn: 0,
      model: 'm',
      at: 1,
      prefixId: 'x',
      usage: { input_tokens: 50 },
    });
    expect(engineFigures(ledger.records(), 'x')).toMatchObject({
      prefill_tokens: 50,
      prefill_limit: null,
      prefill_ratio: null,
      prompt_ms: null,
      predicted_ms: null,
    });
  });

  it('llama.cpp reads per token: cache efficiency of the notes’ run stays at most 1', () => {
    const summary = notesRun().summary();
    expect(summary.cache.cache_efficiency).toBeLessThanOrEqual(1);
    expect(summary.cache.cache_efficiency).toBeGreaterThan(0.99);
  });
});
