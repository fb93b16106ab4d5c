import type { RenderedPrefix } from '../../cache/render.ts';
import type { EmulatorCore } from '../../server/core.ts';
import { positionPath } from '../../server/exchange-log.ts';
import { OpenAiError } from '../errors.ts';

/*
 * `prompt_cache_options.comparison_response_id`: how this prompt compares with an earlier
 * response's. The emulator keeps the position hashes of its latest responses (a bounded
 * record per emulator) and answers with the tokens the two prompts share and where they part.
 */

const KEPT = 256;

interface Kept {
  hashes: string[];
  tokens: number[];
}

const byCore = new WeakMap<EmulatorCore, Map<string, Kept>>();

function keptOf(core: EmulatorCore): Map<string, Kept> {
  let kept = byCore.get(core);
  if (!kept) byCore.set(core, (kept = new Map()));
  return kept;
}

/** Remember a response's prompt, for a later request's comparison. */
export function rememberPrompt(core: EmulatorCore, responseId: string, prefix: RenderedPrefix): void {
  const kept = keptOf(core);
  if (kept.size >= KEPT) kept.delete(kept.keys().next().value!);
  kept.set(responseId, {
    hashes: prefix.positions.map((p) => p.hash),
    tokens: prefix.positions.map((p) => p.cumTokens),
  });
}

/** What `prompt_cache_comparison` says: the shared prefix in tokens, and the first input part that differs. */
interface PromptComparison {
  response_id: string;
  common_prefix_tokens: number;
  /** The first part of this prompt that differs (`tools.2`, `system.0`, `messages.3.content.0`), null when none does. */
  first_difference: string | null;
}

export function comparePrompt(core: EmulatorCore, responseId: string, prefix: RenderedPrefix): PromptComparison {
  const earlier = keptOf(core).get(responseId);
  if (!earlier)
    throw OpenAiError.invalid(
      `No response with id '${responseId}' to compare with (the emulator keeps its latest ${KEPT}).`,
      'prompt_cache_options.comparison_response_id',
      'response_not_found',
    );
  let common = 0;
  for (const [i, p] of prefix.positions.entries()) {
    if (earlier.hashes[i] !== p.hash) {
      return { response_id: responseId, common_prefix_tokens: common, first_difference: positionPath(p) };
    }
    common = p.cumTokens;
  }
  return { response_id: responseId, common_prefix_tokens: common, first_difference: null };
}
