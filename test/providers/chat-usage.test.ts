import { describe, expect, it } from 'vitest';
import { fromChatUsage } from '../../src/core/ledger/chat-usage.ts';

describe('Chat Completions usage in the ledger shape', () => {
  it('OpenAI: cached_tokens are reads, the rest of prompt_tokens uncached, no writes', () => {
    expect(
      fromChatUsage({ prompt_tokens: 10_000, completion_tokens: 20, prompt_tokens_details: { cached_tokens: 9_984 } }),
    ).toEqual({
      input_tokens: 16,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 9_984,
      output_tokens: 20,
    });
  });

  it('DashScope: cache_creation_input_tokens are writes (billed at 125%), out of prompt_tokens', () => {
    const usage = {
      prompt_tokens: 5_000,
      completion_tokens: 3,
      prompt_tokens_details: { cached_tokens: 4_000, cache_creation_input_tokens: 900, cache_type: 'ephemeral' },
    };
    expect(fromChatUsage(usage)).toEqual({
      input_tokens: 100,
      cache_creation_input_tokens: 900,
      cache_read_input_tokens: 4_000,
      output_tokens: 3,
    });
  });

  it('DeepSeek: prompt_cache_hit_tokens are reads, prompt_cache_miss_tokens uncached', () => {
    expect(
      fromChatUsage({
        prompt_tokens: 700,
        completion_tokens: 1,
        prompt_cache_hit_tokens: 640,
        prompt_cache_miss_tokens: 60,
      }),
    ).toEqual({
      input_tokens: 60,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 640,
      output_tokens: 1,
    });
  });

  it('no usage (a stream without include_usage) counts nothing rather than guessing', () => {
    expect(fromChatUsage(undefined)).toEqual({
      input_tokens: 0,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      output_tokens: 0,
    });
  });
});
