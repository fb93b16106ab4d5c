import type { ResponseUsage } from '../types.ts';
import type { ChatCachePlan } from './cache.ts';
import type { CacheRule } from './rules.ts';

/**
 * `usage` exactly as each provider reports it. `prompt_tokens` always counts every prompt
 * token, cached or not; the cache figures are parts of it.
 */
export function chatUsage(plan: ChatCachePlan, completionTokens: number, rule: CacheRule): Record<string, unknown> {
  const base = {
    prompt_tokens: plan.totalTokens,
    completion_tokens: completionTokens,
    total_tokens: plan.totalTokens + completionTokens,
  };
  const cached = plan.cachedTokens;
  switch (rule.usage) {
    case 'openai':
      return {
        ...base,
        prompt_tokens_details: { cached_tokens: cached, audio_tokens: 0 },
        completion_tokens_details: {
          reasoning_tokens: 0,
          audio_tokens: 0,
          accepted_prediction_tokens: 0,
          rejected_prediction_tokens: 0,
        },
      };
    case 'dashscope':
      // Explicit-cache figures appear when the request used markers (DashScope's `cache_type`).
      return {
        ...base,
        prompt_tokens_details:
          plan.markers > 0
            ? {
                cached_tokens: cached,
                cache_creation: { ephemeral_5m_input_tokens: plan.creationTokens },
                cache_creation_input_tokens: plan.creationTokens,
                cache_type: 'ephemeral',
              }
            : { cached_tokens: cached },
      };
    case 'deepseek':
      return {
        ...base,
        prompt_tokens_details: { cached_tokens: cached },
        prompt_cache_hit_tokens: cached,
        prompt_cache_miss_tokens: plan.totalTokens - cached,
      };
  }
}

/**
 * The same figures in the Messages API's terms, which the emulator's stats, rate limiter and
 * cost ledger count in: reads, premium writes (DashScope's creation), the rest as input.
 */
export function internalUsage(plan: ChatCachePlan, completionTokens: number): ResponseUsage {
  return {
    input_tokens: plan.totalTokens - plan.cachedTokens - plan.creationTokens,
    cache_creation_input_tokens: plan.creationTokens,
    cache_read_input_tokens: plan.cachedTokens,
    cache_creation: { ephemeral_5m_input_tokens: plan.creationTokens, ephemeral_1h_input_tokens: 0 },
    output_tokens: completionTokens,
    output_tokens_details: { thinking_tokens: 0 },
    service_tier: 'standard',
    inference_geo: null,
    speed: 'standard',
    server_tool_use: null,
  };
}
