import { describe, expect, it } from 'vitest';
import { fixupCostOf, maxMean } from '../../bench/integration-fixups.ts';
import type { TranscriptTurn } from '../../src/core/run-dir/transcript-reader.ts';

// The integration bench's per-fork comparison (issue 42): a fix-up turn against re-running its
// fork from scratch (its first run again, then the same fix) and against its first run alone.

const turn = (read: number, written: number, output: number, fixup = false): TranscriptTurn =>
  ({
    request: {
      usage: {
        input_tokens: 0,
        cache_read_input_tokens: read,
        cache_creation_input_tokens: written,
        output_tokens: output,
      },
    },
    ...(fixup ? { prompt: { reason: 'fixup', text: '' } } : {}),
  }) as unknown as TranscriptTurn;

// a price per turn: reads at 0.1, writes at 1.25, output at 5 (of an input token's price)
const usd = (turns: readonly TranscriptTurn[]): number =>
  turns.reduce((n, t) => {
    const u = t.request.usage;
    return n + 0.1 * u.cache_read_input_tokens + 1.25 * u.cache_creation_input_tokens + 5 * u.output_tokens;
  }, 0);

describe('the integration bench: a fix-up turn against re-running its fork', () => {
  it('splits at the turn the fix-up prompt followed; a re-run from scratch is the first run and the fix again', () => {
    // first run: 2 requests; the fix-up prompt follows the second; fix-up: 2 requests
    const turns = [turn(1000, 200, 20), turn(1200, 50, 40, true), turn(1250, 220, 20), turn(1470, 50, 40)];
    const cost = fixupCostOf(turns, usd)!;
    expect(cost.firstUsd).toBeCloseTo(100 + 250 + 100 + 120 + 62.5 + 200);
    expect(cost.fixupUsd).toBeCloseTo(125 + 275 + 100 + 147 + 62.5 + 200);
    expect(cost.rerunUsd).toBeCloseTo(cost.firstUsd + cost.fixupUsd);
    // on a longer history the fix costs more than the first run, yet less than re-running
    expect(cost.fixupUsd).toBeGreaterThan(cost.firstUsd);
    expect(cost.fixupUsd / cost.rerunUsd).toBeLessThan(1);
    expect(cost.historyCached).toBe(true); // 1250 read ≥ the 1250 the last first-run request sent
  });

  it('says when the fix-up wrote the history again (an expired cache), and has nothing for a fork without a fix-up', () => {
    const expired = [turn(1000, 200, 20, true), turn(0, 1420, 20)];
    expect(fixupCostOf(expired, usd)!.historyCached).toBe(false);
    expect(fixupCostOf([turn(1000, 200, 20), turn(1200, 50, 40)], usd)).toBeUndefined();
    expect(maxMean([0.5, 0.25])).toEqual({ max: 0.5, mean: 0.375 });
    expect(maxMean([]).max).toBeNaN();
  });
});
