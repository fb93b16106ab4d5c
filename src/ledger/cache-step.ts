import type { ModelEntry } from '../models/catalogue.ts';

/**
 * Providers whose automatic cache reads in whole steps: OpenAI reports hits in 128-token
 * increments, DeepSeek stores prefixes in 64-token units. A request there can read at most
 * its shared prefix rounded down to the step, so that is its maximum in the cache efficiency
 * (the hit ratio still counts every token). Exact elsewhere (Anthropic, DashScope's markers).
 */
const CACHE_STEP_TOKENS: Readonly<Partial<Record<ModelEntry['provider'], number>>> = { openai: 128, deepseek: 64 };

export function cacheStepOf(model: ModelEntry | undefined): number {
  return (model && CACHE_STEP_TOKENS[model.provider]) ?? 1;
}

export function stepDown(tokens: number, step: number): number {
  return step <= 1 ? tokens : Math.floor(tokens / step) * step;
}
