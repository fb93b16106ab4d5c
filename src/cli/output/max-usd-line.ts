import type { FanOutSummary } from '../../core/agent/fork-handle.ts';
import { resumeCommand } from './resume-hint.ts';

/** A cap to suggest for going on: twice the one that stopped the run, in whole cents. */
function nextCap(maxUsd: number): string {
  return (Math.ceil(maxUsd * 200) / 100).toFixed(2);
}

/**
 * What a run stopped by its own spend cap (`--max-usd`, `maxUsd`) tells the user: what was
 * spent, that the forks kept their work, and the one command that goes on, with the cap it
 * needs (`next_max_usd`: spent plus the forks left at the done ones' average). The cap counts
 * the whole run, every pass, so going on needs a higher one.
 */
export function maxUsdMessage(runDir: string | undefined, cap: NonNullable<FanOutSummary['spend_cap']>): string {
  const next = cap.next_max_usd === null ? nextCap(cap.max_usd) : cap.next_max_usd.toFixed(2);
  const way = runDir
    ? `; continue with: ${resumeCommand(runDir, ['--max-usd', next])} (the cap counts the whole run, every pass)`
    : '';
  return `stopped: the run's spend cap of $${cap.max_usd} was reached ($${cap.spent_usd.toFixed(4)} spent, no turn admitted that could pass it); ${cap.stopped_forks} fork(s) capped after their last complete turn (kept in their transcripts)${way}`;
}
