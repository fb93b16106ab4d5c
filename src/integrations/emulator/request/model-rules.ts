import type { ModelEntry } from '../../../core/models/catalogue.ts';
import { ApiError, invalidRequest } from '../api-error.ts';
import type { MessagesRequest } from '../types.ts';
import { checkThinkingBlocks } from './thinking-binding.ts';

/** Claude Code falls back to a top-level system prompt when it sees this `error.details.error_code`. */
const MID_CONVERSATION_SYSTEM_NOT_SUPPORTED = 'mid_conversation_system_not_supported';

/**
 * What a model accepts, from the catalogue's `constraints` (the API's per-model rules):
 * system turns in `messages`, adaptive-only thinking, forced tool_choice, prefill, and the
 * binding of replayed thinking blocks to their conversation.
 */
export function checkModelRules(
  req: MessagesRequest,
  model: ModelEntry,
  options: { countTokens?: boolean } = {},
): void {
  const c = model.constraints;
  if (!c.systemMessages) {
    const i = req.messages.findIndex((m) => m.role === 'system');
    if (i >= 0) {
      // Wording a client can match: `Unexpected role "system"` … `input message role`.
      throw new ApiError(
        'EMULATOR_INVALID_REQUEST',
        'invalid_request_error',
        `messages.${i}.role: Unexpected role "system". The input message role must be "user" or "assistant" on ${model.id}; put system content in the top-level "system" parameter.`,
        { model: model.id },
        { error_code: MID_CONVERSATION_SYSTEM_NOT_SUPPORTED },
      );
    }
  }
  const thinking = req.thinking?.type;
  if (c.adaptiveThinkingOnly && (thinking === 'enabled' || thinking === 'disabled')) {
    throw invalidRequest(
      `thinking.type: "${thinking}" is not supported on ${model.id}; this model only supports "adaptive" thinking.`,
    );
  }
  const choice = req.tool_choice?.type;
  if (!c.forcedToolChoice && (choice === 'any' || choice === 'tool')) {
    throw invalidRequest(`tool_choice.type: "${choice}" is not supported on ${model.id}; use "auto" or "none".`);
  }
  const last = req.messages[req.messages.length - 1];
  if (!c.prefill && !options.countTokens && last?.role === 'assistant') {
    throw invalidRequest(
      `messages: ${model.id} does not support assistant message prefill; the conversation must end with a user message.`,
    );
  }
  checkThinkingBlocks(req, model.id, { binds: c.bindsThinkingBlocks });
}

/**
 * Whether the answer opens with a thinking block: thinking asked for (adaptive, enabled,
 * between tools), or not mentioned on an always-adaptive model (it thinks by default). Never
 * when continuing a prefilled assistant turn, nor for a pre-warm.
 */
export function answersWithThinking(req: MessagesRequest, model: ModelEntry): boolean {
  if (req.max_tokens === 0 || req.messages[req.messages.length - 1]?.role === 'assistant') return false;
  const type = req.thinking?.type;
  if (type === undefined) return model.constraints.adaptiveThinkingOnly;
  return type !== 'disabled';
}
