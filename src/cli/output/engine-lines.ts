import type { FanOutSummary } from '../../core/agent/fork-handle.ts';

const n = (x: number): string => x.toLocaleString('en-US');
const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

/**
 * A local engine's figures for the terminal: the compute a fan-out cost (prompt tokens the server
 * computed, against the prefix once plus each fork's own part in full), the
 * server's own times, and what was done with llama.cpp's slots. Nothing on a hosted API.
 */
export function engineLines(s: FanOutSummary): string[] {
  const e = s.engine;
  if (!e) return [];
  const limit =
    e.prefill_limit === null || e.prefill_ratio === null
      ? ''
      : `, ${e.prefill_ratio.toFixed(2)}× the limit (${n(e.prefill_limit)}: the prefix once + each fork's own part)`;
  const times =
    e.prompt_ms === null || e.predicted_ms === null
      ? 'the server reported no times'
      : `server time: prompt ${seconds(e.prompt_ms)}, generation ${seconds(e.predicted_ms)} (${n(e.timed_requests)} of ${n(e.requests)} requests)`;
  const lines = [`engine  prefill ${n(e.prefill_tokens)} tokens computed${limit}; ${times}`];
  const slots = e.slots;
  if (slots && slots.total > 0) {
    const how = {
      copy: slots.clears_idle
        ? 'one prefill (the prefix, then the fork rules), copied into a slot just before each fork (the server clears idle slots)'
        : 'one prefill (the prefix, then the fork rules), copied into every slot',
      'warm-each': 'one prefill per slot',
      'one-slot': 'one slot for every fork in turn',
      none: 'one slot',
    }[slots.fill];
    // the policy's line says what it chose and why; older summaries have only the fill
    lines.push(
      slots.policy
        ? `slots   ${slots.used} of ${slots.total} used, one request each at a time: ${slots.policy}`
        : `slots   ${slots.used} of ${slots.total} used, at most one fork each: ${how}`,
    );
  }
  if (slots?.note) lines.push(`slots   ${slots.note}`);
  return lines;
}
