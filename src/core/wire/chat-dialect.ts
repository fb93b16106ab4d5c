/**
 * What differs between the Chat Completions providers, as data. Each provider's adapter
 * declares its own (`ProviderAdapter.chat`, in src/providers/<id>/): core renders a head in any
 * dialect and names no provider.
 */
export interface ChatDialect {
  /**
   * Explicit `cache_control` markers on content parts (DashScope). Elsewhere markers are
   * stripped: the cache is automatic and a strict endpoint would refuse the unknown field.
   */
  markers: boolean;
  /** The output limit's name: OpenAI's newer models refuse `max_tokens`. */
  maxTokensField: 'max_tokens' | 'max_completion_tokens';
  /** `prompt_cache_key` routes requests with one prefix to the same cache machines (OpenAI). */
  cacheKey: boolean;
  /** Headers on every request (Qwen Code sends DashScope's cache header; harmless elsewhere). */
  headers: Readonly<Record<string, string>>;
  /** Fields every request of this provider ends with (after the frozen head, so the head stays one). */
  requestFields?: Readonly<Record<string, unknown>>;
}
