import { describe, expect, it } from 'vitest';
import { ForkEngine } from '../../../src/core/engine/engine.ts';
import { UsageLedger } from '../../../src/core/ledger/ledger.ts';
import { BUILTIN_CATALOGUE, type ModelCatalogue, type ModelEntry } from '../../../src/core/models/catalogue.ts';
import { bigSnapshot, sharedEmulator, workspace } from './helpers.ts';

const emulator = sharedEmulator();
const DIRECTIVES = ['read a.ts and report', 'read b.ts and report'];

/** A ledger whose summary fails: what a fan-out meets when something breaks after its forks finished. */
class BrokenSummaryLedger extends UsageLedger {
  override summary(): never {
    throw new Error('the summary broke');
  }
}

/** The built-in catalogue with one model's input price out of range, built by hand (no file schema). */
function catalogueWithPrice(model: string, inputPerMTok: number): ModelCatalogue {
  const models = BUILTIN_CATALOGUE.models.map((m): ModelEntry =>
    m.id !== model
      ? m
      : { ...m, prices: m.prices.map((row) => ({ ...row, tiers: row.tiers.map((t) => ({ ...t, inputPerMTok })) })) },
  );
  return { ...BUILTIN_CATALOGUE, models };
}

describe('a fan-out that fails after its forks finished', () => {
  it("close() still stops the threads: the failure is settled()'s to report, not a reason to stay open", async () => {
    const engine = await ForkEngine.create({ baseURL: emulator.current.url, apiKey: 'test', workspace: workspace() });
    const fan = engine.fanOut(bigSnapshot(`close-${Date.now()}`), DIRECTIVES, { ledger: new BrokenSummaryLedger() });
    // closed while the fan-out runs, as the CLI's `finally` does when something throws
    const closed = engine.close();
    for await (const _ of fan);
    await expect(fan.settled()).rejects.toThrow('the summary broke');
    await expect(closed).resolves.toBeUndefined(); // before: rejected, and the pool stayed open
    expect(() => engine.fanOut(bigSnapshot('again'), DIRECTIVES)).toThrow(
      expect.objectContaining({ code: 'ENGINE_CLOSED' }),
    );
  });

  it('a price out of range leaves the costs out with the reason, and the summary is still made', async () => {
    const snapshot = bigSnapshot(`overflow-${Date.now()}`);
    const engine = await ForkEngine.create({
      baseURL: emulator.current.url,
      apiKey: 'test',
      workspace: workspace(),
      modelTable: catalogueWithPrice(snapshot.model, 1e308),
    });
    try {
      const fan = engine.fanOut(snapshot, DIRECTIVES);
      for await (const _ of fan);
      const { forks, summary } = await fan.settled();
      expect(forks.map((f) => f.status)).toEqual(['completed', 'completed']);
      expect(summary.cost_usd).toMatchObject({ actual: null, no_cache: null, fresh_agents: null, breakdown: null });
      expect(summary.cost_error).toMatch(/^cost not computed: cost overflow: NaN nano-dollars is not a safe integer/);
      expect(summary.warnings).toContain(summary.cost_error);
      expect(summary.usage.cache_read_input_tokens).toBeGreaterThan(0); // the tokens still count
    } finally {
      await engine.close();
    }
  });
});
