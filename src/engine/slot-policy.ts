import type { EngineSlots, SwitchFigures } from '../ledger/engine-figures.ts';
import type { SlotPool } from './slot-pool.ts';

/** Switches measured before the policy judges them (the first one can be slow: a cold page cache). */
const SWITCHES_TO_JUDGE = 2;

/**
 * What the policy learns from the first switches: a save and a restore against computing the
 * fork's own turns again (its own part × the server's measured prompt time per token). Where
 * switching costs more (a GPU computes prompts fast, and a big model's files are hundreds of
 * MB), it is turned off: a fork's later turn then reads the prefix from the slot and computes
 * its own part. Returns why, once, when it turned switching off.
 */
export function judgeSwitching(pool: SlotPool): string | undefined {
  const f = pool.figures;
  if (!pool.switching || f.restores < SWITCHES_TO_JUDGE || f.saves === 0 || pool.promptTokens === 0) return undefined;
  const switchMs = f.save_ms / f.saves + f.restore_ms / f.restores;
  const recomputeMs = pool.averageOwnTokens() * (pool.promptMs / pool.promptTokens);
  if (switchMs <= recomputeMs) return undefined;
  pool.switching = false;
  return `switching stopped after ${f.restores} restores: a save and a restore took ${switchMs.toFixed(0)} ms, computing a fork's own turns again ${recomputeMs.toFixed(0)} ms`;
}

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

/** The summary's one line: what the policy chose, why, and what it did. */
export function policyLine(report: EngineSlots, pool: SlotPool, stopped: string | undefined): string {
  const f = pool.figures;
  const many = pool.size > 1;
  const chose =
    report.fill === 'warm-each'
      ? `${pool.size} slots, a prefill each`
      : `${many ? `${pool.size} slots` : 'one slot'}${report.fill === 'copy' ? ' with the prefix copied' : ''}${pool.switching || f.saves > 0 ? ', each fork’s KV switched in and out' : ''}`;
  const why = !many
    ? report.clears_idle
      ? 'the server clears idle slots (one unified KV cache), so one slot takes the forks’ requests in turn'
      : report.total <= 1
        ? 'the server has one slot'
        : 'one fork'
    : report.clears_idle
      ? 'asked for copies on a server that clears idle slots'
      : `-np ${report.total} keeps idle slots`;
  const switching =
    f.saves + f.restores + f.recomputed === 0
      ? ''
      : `; ${f.saves} saves, ${f.restores} restores (${f.save_ms.toFixed(0)} + ${f.restore_ms.toFixed(0)} ms), ${f.recomputed} later turns recomputed`;
  const tools =
    f.outside_ms + f.inside_ms > 0
      ? `; forks spent ${seconds(f.outside_ms)} between requests (tools, checks) and ${seconds(f.inside_ms)} in them`
      : '';
  return `${chose}: ${why}${switching}${tools}${stopped ? `; ${stopped}` : ''}`;
}

/** The figures as the summary reports them. */
export function switchFigures(pool: SlotPool, filesLeft: number): SwitchFigures {
  return { on: pool.switching, ...pool.figures, peak_requests: pool.peakInFlight, files_left: filesLeft };
}
