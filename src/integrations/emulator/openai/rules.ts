/**
 * The emulator's API modes and, for the OpenAI-compatible ones, each provider's prompt-cache
 * rule as data (summarised in docs/emulator-openai.md). Where a provider documents nothing
 * (OpenAI's moment of readability) the choice is marked.
 */

export const EMULATOR_APIS = ['anthropic', 'openai', 'dashscope', 'deepseek'] as const;
export type EmulatorApi = (typeof EMULATOR_APIS)[number];
export type OpenAiCompatibleApi = Exclude<EmulatorApi, 'anthropic'>;

export interface CacheRule {
  /** `automatic`: any earlier prompt's prefix is reusable; `explicit`: only what a marker wrote. */
  mode: 'automatic' | 'explicit';
  /** Below this many prompt tokens nothing is cached. */
  minTokens: number;
  /** Hits are reported in whole steps of this many tokens (1: exact). */
  step: number;
  /** Lifetime of an entry, refreshed by a hit (ms). */
  ttlMs: number;
  /** Which usage fields the provider reports. */
  usage: 'openai' | 'dashscope' | 'deepseek';
}

const MINUTE = 60_000;

export const CACHE_RULES: Readonly<Record<OpenAiCompatibleApi, CacheRule>> = {
  // Automatic prefix caching: 1,024-token minimum, hits in 128-token steps, writes free, idle
  // lifetime 5–10 minutes (5 here). When an entry becomes readable is not documented: the
  // emulator makes it readable when the creating response completes (as DashScope documents),
  // so simultaneous siblings miss, which is what users observe.
  openai: { mode: 'automatic', minTokens: 1024, step: 128, ttlMs: 5 * MINUTE, usage: 'openai' },
  // Explicit cache: markers on content parts, ≤ 4, 20-block lookback, tool markers ignored,
  // 5-minute TTL reset on hit, readable after the creating response completes.
  dashscope: { mode: 'explicit', minTokens: 1024, step: 1, ttlMs: 5 * MINUTE, usage: 'dashscope' },
  // Context caching on disk in 64-token storage units (DeepSeek's guide); entries last hours to
  // days there, one hour here (long enough for any run the emulator serves).
  deepseek: { mode: 'automatic', minTokens: 64, step: 64, ttlMs: 60 * MINUTE, usage: 'deepseek' },
};

/** The most `cache_control` markers a DashScope request may carry. */
export const DASHSCOPE_MAX_MARKERS = 4;
/** How many blocks back from a marker DashScope looks for an entry. */
export const DASHSCOPE_LOOKBACK_BLOCKS = 20;

/** Whole steps of `step` tokens, and nothing below the minimum. */
export function reportedHit(tokens: number, rule: Pick<CacheRule, 'minTokens' | 'step'>): number {
  if (tokens < rule.minTokens) return 0;
  return Math.floor(tokens / rule.step) * rule.step;
}
