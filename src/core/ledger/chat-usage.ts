import type { UsageInput } from './usage.ts';

/** The usage object of a Chat Completions response, with every provider's cache fields. */
export interface ChatUsage {
  prompt_tokens?: number | null;
  completion_tokens?: number | null;
  prompt_tokens_details?: { cached_tokens?: number | null; cache_creation_input_tokens?: number | null } | null;
  /** DashScope also reports the write at the top level in some modes. */
  cache_creation_input_tokens?: number | null;
  /** DeepSeek. */
  prompt_cache_hit_tokens?: number | null;
  prompt_cache_miss_tokens?: number | null;
}

/**
 * Chat Completions usage in the ledger's shape: read (`cached_tokens`, DeepSeek's hit tokens),
 * written (DashScope's `cache_creation_input_tokens`; OpenAI and DeepSeek bill no writes),
 * uncached (the rest of `prompt_tokens`, which counts every input token) and output.
 */
export function fromChatUsage(usage: ChatUsage | null | undefined): UsageInput {
  const prompt = usage?.prompt_tokens ?? 0;
  const output = usage?.completion_tokens ?? 0;
  if (usage?.prompt_cache_hit_tokens != null || usage?.prompt_cache_miss_tokens != null) {
    const read = usage.prompt_cache_hit_tokens ?? 0;
    return {
      input_tokens: usage.prompt_cache_miss_tokens ?? Math.max(0, prompt - read),
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: read,
      output_tokens: output,
    };
  }
  const read = usage?.prompt_tokens_details?.cached_tokens ?? 0;
  const written = usage?.prompt_tokens_details?.cache_creation_input_tokens ?? usage?.cache_creation_input_tokens ?? 0;
  return {
    input_tokens: Math.max(0, prompt - read - written),
    cache_creation_input_tokens: written,
    cache_read_input_tokens: read,
    output_tokens: output,
  };
}
