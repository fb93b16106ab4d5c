import { z } from 'zod';

/**
 * The wire a fan-out speaks. `anthropic`: the Messages API. The others speak Chat Completions
 * and differ in their cache rules: `dashscope` (Qwen) caches only at explicit `cache_control`
 * markers; `openai` and `deepseek` cache automatically; `openai-compatible` is a local vLLM or
 * SGLang server (automatic prefix caching inside one engine); `llama-cpp` is llama.cpp's
 * `llama-server`, whose cache is per slot (the fan-out fills the slots and pins each fork to one).
 */
export const PROVIDER_IDS = ['anthropic', 'openai', 'dashscope', 'deepseek', 'openai-compatible', 'llama-cpp'] as const;
export type ProviderId = (typeof PROVIDER_IDS)[number];

export const providerIdSchema = z.enum(PROVIDER_IDS, { error: `expected one of ${PROVIDER_IDS.join(', ')}` });

/**
 * When a request's cache writes become readable by a sibling, which is what the warm-first
 * gate waits for: `response-start` (Anthropic: once `message_start` arrives), `response-end`
 * (DashScope and DeepSeek document it; OpenAI documents nothing, so it is treated the same),
 * `none` (vLLM/SGLang cache a block as soon as it is allocated: siblings in one batch share it).
 * llama.cpp holds a prompt in the slot that computed it once the request is done (`response-end`);
 * its fan-out also fills every slot before releasing siblings (src/providers/llama-cpp/slot-fill.ts).
 */
export type Readability = 'response-start' | 'response-end' | 'none';

/**
 * The APIs OpenAI serves a fan-out on: `chat` (Chat Completions, the default, as every
 * OpenAI-compatible provider) or `responses` (the Responses API, OpenAI's own: explicit
 * breakpoints, `prompt_cache_options` with a 30-minute or 12-hour TTL and `prewarm`).
 */
export const OPENAI_WIRES = ['chat', 'responses'] as const;
export type OpenAiWire = (typeof OPENAI_WIRES)[number];

/** True for the providers that speak Chat Completions. */
export function isChatProvider(provider: ProviderId): provider is Exclude<ProviderId, 'anthropic'> {
  return provider !== 'anthropic';
}

/**
 * A cached prefix of `tokens` as a provider with a cache step of `step` tokens can read it:
 * rounded down to the step (`ProviderFacts.cacheStepTokens`: llama.cpp matches per token, its
 * step is 1: a byte changed 5 characters before the end of a 2,046-token prefix still reads 2,041).
 */
export function stepDown(step: number, tokens: number): number {
  return Math.floor(tokens / step) * step;
}
