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
 * The model a provider's demo and economics runs use when none is given: a dated catalogue
 * row for each hosted provider; for a local server any id is served (and runs unpriced).
 */
export const PROVIDER_DEFAULT_MODELS: Readonly<Record<Exclude<ProviderId, 'anthropic'>, string>> = {
  openai: 'gpt-5',
  dashscope: 'qwen3-coder-plus',
  deepseek: 'deepseek-chat',
  'openai-compatible': 'qwen3-coder-30b-a3b-instruct',
  // llama-server serves the one model it loaded, whatever the id: a local id, never priced
  'llama-cpp': 'local-gguf',
};

/** A server the user runs (vLLM, SGLang, llama.cpp): no price, its cost is the compute it does. */
export function isLocalEngine(provider: ProviderId): boolean {
  return provider === 'openai-compatible' || provider === 'llama-cpp';
}

/**
 * Providers whose automatic cache reads in whole steps: OpenAI reports hits in 128-token
 * increments, DeepSeek stores prefixes in 64-token units, vLLM caches full blocks (16 tokens by
 * default). llama.cpp matches per token (its step is 1: a byte changed 5 characters before the
 * end of a 2,046-token prefix still reads 2,041). A request there can read at most its shared prefix rounded down to the step, which
 * is what the ledger is told it could read.
 */
const CACHE_STEP_TOKENS: Readonly<Partial<Record<ProviderId, number>>> = {
  openai: 128,
  deepseek: 64,
  'openai-compatible': 16,
  'llama-cpp': 1,
};

export function stepDown(provider: ProviderId, tokens: number): number {
  const step = CACHE_STEP_TOKENS[provider] ?? 1;
  return Math.floor(tokens / step) * step;
}
