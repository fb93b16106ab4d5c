import type { CacheMissReason } from '../types.ts';
import type { PromptFingerprint } from './render.ts';

interface PromptRecord {
  fingerprint: PromptFingerprint;
  /** Tokens the previous request left cached (read + written). */
  cachedTokens: number;
}

/** Records kept for `diagnostics.previous_message_id`; the oldest are forgotten beyond this. */
const RECORD_LIMIT = 10_000;

function isPrefix(shorter: readonly string[], longer: readonly string[]): boolean {
  return shorter.length <= longer.length && shorter.every((digest, i) => digest === longer[i]);
}

/**
 * Cache-miss diagnostics as the API offers them: a request names the id of the previous
 * response (`diagnostics.previous_message_id`), and the response says which part of the
 * prompt diverged — model, tools, system, or an earlier message (not merely appended ones).
 * Other prompt-affecting settings (tool_choice, thinking) give `unavailable`, as on the API.
 */
export class DiagnosticsLog {
  readonly #records = new Map<string, PromptRecord>();

  remember(messageId: string, fingerprint: PromptFingerprint, cachedTokens: number): void {
    if (this.#records.size >= RECORD_LIMIT) this.#records.delete(this.#records.keys().next().value!);
    this.#records.set(messageId, { fingerprint, cachedTokens });
  }

  /** The miss reason, or null when nothing diverged (or no previous id was given). */
  reason(
    previousId: string | null | undefined,
    current: PromptFingerprint,
    readTokens: number,
  ): CacheMissReason | null {
    if (previousId === undefined || previousId === null) return null;
    const previous = this.#records.get(previousId);
    if (!previous) return { type: 'previous_message_not_found' };
    const before = previous.fingerprint;
    const missed = Math.max(0, previous.cachedTokens - readTokens);
    if (before.model !== current.model) return { type: 'model_changed', cache_missed_input_tokens: missed };
    if (before.tools !== current.tools) return { type: 'tools_changed', cache_missed_input_tokens: missed };
    if (before.system !== current.system) return { type: 'system_changed', cache_missed_input_tokens: missed };
    if (before.settings !== current.settings) return { type: 'unavailable' };
    if (!isPrefix(before.messages, current.messages))
      return { type: 'messages_changed', cache_missed_input_tokens: missed };
    return null;
  }
}
