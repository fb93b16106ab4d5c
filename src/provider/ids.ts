import { z } from 'zod';

/**
 * The wire a fan-out speaks. `anthropic`: the Messages API. The others speak Chat Completions
 * and differ in their cache rules: `dashscope` (Qwen) caches only at explicit `cache_control`
 * markers; `openai` and `deepseek` cache automatically; `openai-compatible` is a local vLLM or
 * SGLang server (automatic prefix caching inside one engine).
 */
export const PROVIDER_IDS = ['anthropic', 'openai', 'dashscope', 'deepseek', 'openai-compatible'] as const;
export type ProviderId = (typeof PROVIDER_IDS)[number];

export const providerIdSchema = z.enum(PROVIDER_IDS, { error: `expected one of ${PROVIDER_IDS.join(', ')}` });

/**
 * When a request's cache writes become readable by a sibling, which is what the warm-first
 * gate waits for: `response-start` (Anthropic: once `message_start` arrives), `response-end`
 * (DashScope and DeepSeek document it; OpenAI documents nothing, so it is treated the same),
 * `none` (vLLM/SGLang cache a block as soon as it is allocated: siblings in one batch share it).
 */
export type Readability = 'response-start' | 'response-end' | 'none';

export function readabilityOf(provider: ProviderId): Readability {
  switch (provider) {
    case 'anthropic':
      return 'response-start';
    case 'openai-compatible':
      return 'none';
    default:
      return 'response-end';
  }
}

/** True for the providers that speak Chat Completions. */
export function isChatProvider(provider: ProviderId): provider is Exclude<ProviderId, 'anthropic'> {
  return provider !== 'anthropic';
}
