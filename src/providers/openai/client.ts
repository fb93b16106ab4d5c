import OpenAI from 'openai';
import type { ProviderAdapter } from '../../core/engine/provider.ts';
import { endpointFromEnv } from '../../core/wire/providers.ts';

interface ChatClientOptions {
  /** The provider's endpoint and dialect: its adapter (`PROVIDERS.dashscope`), or the facts `chatAdapter` is made of. */
  provider: Pick<ProviderAdapter, 'endpoint' | 'chat'>;
  /** API root including `/v1` (the emulator's `url` + `/v1`). Default: the provider's env var, else its public endpoint. */
  baseURL?: string | undefined;
  /** Default: the provider's key variable (`OPENAI_API_KEY`, `DASHSCOPE_API_KEY`, `DEEPSEEK_API_KEY`). */
  apiKey?: string | undefined;
  /** SDK retries (default 0), for requests that bill nothing: a completion is never resent by the SDK (`BILLED_REQUEST_RETRIES`). */
  maxRetries?: number | undefined;
  timeoutMs?: number | undefined;
  fetch?: typeof fetch | undefined;
  defaultHeaders?: Record<string, string> | undefined;
}

/**
 * The real `openai` client for any Chat Completions provider. As with the Anthropic SDK,
 * forkcache sends raw bytes through `client.post`: a Uint8Array body reaches `fetch` unchanged.
 */
export function createChatClient(options: ChatClientOptions): OpenAI {
  const env = endpointFromEnv(options.provider.endpoint);
  return new OpenAI({
    baseURL: options.baseURL ?? env.baseURL,
    apiKey: options.apiKey || env.apiKey || 'no-key',
    maxRetries: options.maxRetries ?? 0,
    timeout: options.timeoutMs ?? 600_000,
    ...(options.fetch ? { fetch: options.fetch } : {}),
    defaultHeaders: { ...options.provider.chat?.headers, ...options.defaultHeaders },
  });
}
