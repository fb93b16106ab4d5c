import { describe, expect, it } from 'vitest';
import { BENCH_BASELINES_NOTE, baselineColumns } from '../../../bench/economics-baseline.ts';
import { ForkEngine } from '../../../src/core/engine/engine.ts';
import { estimateRun } from '../../../src/integrations/economics/estimate.ts';
import { totalInputTokens } from '../../../src/core/ledger/usage.ts';
import { BUILTIN_CATALOGUE } from '../../../src/core/models/catalogue.ts';
import { bigSnapshot, sharedEmulator, workspace } from '../engine/helpers.ts';

// Issue 27: "fresh agents" meant three things. Now one definition (src/core/ledger/fresh-agents.ts),
// and the same fan-out must give the same figure through each path that prints it: the run's
// ledger summary, the economics estimator (what `economics --whole-run` and `run --dry-run`
// compute) given that fan-out's shape, and the benchmark's row.
const emulator = sharedEmulator({ script: 'refactor' });
const FILES = {
  'a.ts': 'export const a = 1;\n'.repeat(40),
  'b.ts': 'export const b = 2;\n'.repeat(60),
  'c.ts': 'export const c = 3;\n'.repeat(80),
};

describe('one fresh-agents baseline through every path', () => {
  it('ledger summary, estimator and bench row agree on the same fan-out', async () => {
    const engine = await ForkEngine.create({
      baseURL: emulator.current.url,
      apiKey: 'test',
      workspace: workspace(FILES),
    });
    const snapshot = bigSnapshot(`paths-${Date.now()}`);
    try {
      const fan = engine.fanOut(
        snapshot,
        Object.keys(FILES).map((f) => `read ${f} and report`),
      );
      const { forks, summary } = await fan.settled();
      expect(forks.map((f) => f.status)).toEqual(['completed', 'completed', 'completed']);
      const ledgerFigure = summary.cost_usd.fresh_agents;
      expect(ledgerFigure).not.toBeNull();

      // The estimator, given this fan-out's shape as measured: P, each fork's D, F, and per
      // turn its output and what the next request grew by (its result and framing).
      const P = summary.prefix.shared_tokens!;
      const shapes = forks.map((f) => {
        const totals = f.requests.map((r) => totalInputTokens(r.usage));
        return {
          directiveTokens: totals[0]! - P,
          turns: f.requests.slice(0, -1).map((r, k) => ({
            label: `turn ${k + 1}`,
            output: r.usage.output_tokens,
            result: totals[k + 1]! - totals[k]! - r.usage.output_tokens,
          })),
          reportTokens: f.requests.at(-1)!.usage.output_tokens,
        };
      });
      expect(summary.fresh_head_tokens).toBeGreaterThan(0); // F, counted by the endpoint
      const estimate = estimateRun({
        model: snapshot.model,
        table: BUILTIN_CATALOGUE,
        at: forks[0]!.requests[0]!.sentAt,
        sharedTokens: P,
        warm: 'first-child',
        freshHeadTokens: summary.fresh_head_tokens!,
        forks: shapes,
        turnOverhead: 0,
        maxTokens: 8_192,
      });
      expect(estimate.freshAgentsUsd).toBe(ledgerFigure);
      // and the same cache rules give the run's actual cost, request for request
      expect(estimate.cost.usd).toBe(summary.cost_usd.actual);
      expect(estimate.noCacheUsd).toBe(summary.cost_usd.no_cache);

      // The bench's row carries the ledger's figure, with its one-sentence definition.
      const row = baselineColumns(summary);
      expect(row.fresh_agents_usd).toBe(Number(ledgerFigure!.toFixed(4)));
      expect(BENCH_BASELINES_NOTE).toMatch(/no cache: the same requests.*fresh agents: each fork replaced by an agent/);
    } finally {
      await engine.close();
    }
  });
});
