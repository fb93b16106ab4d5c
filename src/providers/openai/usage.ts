import type { EngineTimings } from '../../core/ledger/usage.ts';

// Chat usage is mapped in the ledger: the AI SDK adapter reads an app's own Chat responses too.

const isMillis = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v >= 0;

/**
 * llama.cpp's `timings` (`prompt_ms`, `predicted_ms`, beside `usage`) as the ledger keeps them;
 * nothing when the server sent none or a shape this does not know (other servers send none).
 */
export function engineTimings(raw: unknown): { timings?: EngineTimings } {
  if (typeof raw !== 'object' || raw === null) return {};
  const { prompt_ms: prompt, predicted_ms: predicted } = raw as Record<string, unknown>;
  return isMillis(prompt) && isMillis(predicted) ? { timings: { prompt_ms: prompt, predicted_ms: predicted } } : {};
}
