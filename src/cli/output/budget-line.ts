import type { AdmissionView } from '../../core/gate/admission/scheduler.ts';
import { resumeCommand } from './resume-hint.ts';

/** Exit code of a run stopped by the API's spend cap (`enforced_spend_limit_reached`): resume it once the cap is lifted. */
export const SPEND_CAP_EXIT_CODE = 3;

const short = (n: number): string =>
  n >= 1e6 ? `${(n / 1e6).toFixed(2)}M` : n >= 1e4 ? `${Math.round(n / 1e3)}K` : n.toLocaleString('en-US');
const pair = (used: number, limit: number | undefined): string =>
  limit === undefined ? `${short(used)}/?` : `${short(used)}/${short(limit)}`;

/**
 * One line per model class: the rate-limit budget in use against the limits learned from the
 * API (RPM, ITPM, OTPM: what the bucket is short of full), the requests queued for a permit,
 * and a backoff or ramp in progress. Empty before any request was admitted.
 */
export function formatBudget(view: AdmissionView): string[] {
  return view.classes.map((c) => {
    const parts = [
      `budget ${c.modelClass}`,
      `RPM ${pair(c.used.rpm, c.limits.rpm)}`,
      `ITPM ${pair(c.used.itpm, c.limits.itpm)}`,
      `OTPM ${pair(c.used.otpm, c.limits.otpm)}`,
      `in flight ${c.inFlight}`,
      `queued ${view.waiting}`,
    ];
    if (c.blockedMs > 0) parts.push(`backoff ${(c.blockedMs / 1000).toFixed(1)} s`);
    if (c.rampCap !== undefined) parts.push(`ramp ≤ ${c.rampCap}/10 s`);
    if (view.stopped) parts.push(`STOPPED: ${view.stopped.errorCode}`);
    if (view.mode === 'off') parts.push('(admission off)');
    return parts.join('  ');
  });
}

/** What a run stopped by the spend cap tells the user, with the way on. */
export function spendCapMessage(runDir: string | undefined, stoppedForks: number): string {
  return `stopped: the API's spend limit was reached (enforced_spend_limit_reached); ${stoppedForks} fork(s) stopped after their last complete turn (kept in their transcripts)${runDir ? `; continue with: ${resumeCommand(runDir)}` : ''} once the limit is lifted`;
}
