import type { ProviderId } from '../wire/providers.ts';

export type ChatProviderId = Exclude<ProviderId, 'anthropic'>;

/** What differs between the Chat Completions providers, as data. */
export interface ChatDialect {
  id: ChatProviderId;
  /**
   * Explicit `cache_control` markers on content parts (DashScope). Elsewhere markers are
   * stripped: the cache is automatic and a strict endpoint would refuse the unknown field.
   */
  markers: boolean;
  /** The output limit's name: OpenAI's newer models refuse `max_tokens`. */
  maxTokensField: 'max_tokens' | 'max_completion_tokens';
  /** `prompt_cache_key` routes requests with one prefix to the same cache machines (OpenAI). */
  cacheKey: boolean;
  /** Environment variables: the key, and the base URL. */
  keyEnv: readonly string[];
  baseUrlEnv: readonly string[];
  defaultBaseURL: string;
  /** Headers on every request (Qwen Code sends DashScope's cache header; harmless elsewhere). */
  headers: Readonly<Record<string, string>>;
  /** Fields every request of this provider ends with (after the frozen head, so the head stays one). */
  requestFields?: Readonly<Record<string, unknown>>;
}

const CHAT_DIALECTS: Readonly<Record<ChatProviderId, ChatDialect>> = {
  openai: {
    id: 'openai',
    markers: false,
    maxTokensField: 'max_completion_tokens',
    cacheKey: true,
    keyEnv: ['OPENAI_API_KEY'],
    baseUrlEnv: ['OPENAI_BASE_URL'],
    defaultBaseURL: 'https://api.openai.com/v1',
    headers: {},
  },
  dashscope: {
    id: 'dashscope',
    markers: true,
    maxTokensField: 'max_tokens',
    cacheKey: false,
    keyEnv: ['DASHSCOPE_API_KEY'],
    baseUrlEnv: ['DASHSCOPE_BASE_URL'],
    defaultBaseURL: 'https://dashscope-intl.aliyuncs.com/compatible-mode/v1',
    headers: { 'X-DashScope-CacheControl': 'enable' },
  },
  deepseek: {
    id: 'deepseek',
    markers: false,
    maxTokensField: 'max_tokens',
    cacheKey: false,
    keyEnv: ['DEEPSEEK_API_KEY'],
    baseUrlEnv: ['DEEPSEEK_BASE_URL'],
    defaultBaseURL: 'https://api.deepseek.com/v1',
    headers: {},
  },
  // a local vLLM or SGLang server: OPENAI_BASE_URL names it, any key is accepted
  'openai-compatible': {
    id: 'openai-compatible',
    markers: false,
    maxTokensField: 'max_tokens',
    cacheKey: false,
    keyEnv: ['OPENAI_API_KEY'],
    baseUrlEnv: ['OPENAI_BASE_URL'],
    defaultBaseURL: 'http://127.0.0.1:8000/v1',
    headers: {},
  },
  // llama.cpp's llama-server (8080 is its usual port); `cache_prompt` is its default on recent
  // builds and is sent anyway: an older server would otherwise recompute every prompt
  'llama-cpp': {
    id: 'llama-cpp',
    markers: false,
    maxTokensField: 'max_tokens',
    cacheKey: false,
    keyEnv: ['OPENAI_API_KEY'],
    baseUrlEnv: ['OPENAI_BASE_URL'],
    defaultBaseURL: 'http://127.0.0.1:8080/v1',
    headers: {},
    requestFields: { cache_prompt: true },
  },
};

export function dialectOf(id: ChatProviderId): ChatDialect {
  return CHAT_DIALECTS[id];
}

function firstEnv(names: readonly string[]): string | undefined {
  for (const name of names) if (process.env[name]) return process.env[name];
  return undefined;
}

/** The provider's base URL and key as the environment gives them. */
export function chatEndpointFromEnv(provider: ChatProviderId): { baseURL: string; apiKey: string | undefined } {
  const dialect = dialectOf(provider);
  return { baseURL: firstEnv(dialect.baseUrlEnv) ?? dialect.defaultBaseURL, apiKey: firstEnv(dialect.keyEnv) };
}
