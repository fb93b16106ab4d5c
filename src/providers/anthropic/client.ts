import Anthropic from '@anthropic-ai/sdk';

interface ClientOptions {
  /** API root, e.g. the emulator's `url`. Default: the SDK's (ANTHROPIC_BASE_URL or the real API). */
  baseURL?: string | undefined;
  /** Default: ANTHROPIC_API_KEY. The emulator accepts any key. */
  apiKey?: string | undefined;
  /**
   * SDK retries of connection errors, 408/409/429/5xx (default 0). They apply only to requests
   * that bill nothing (token counts, the model list): a Messages request is never resent by the
   * SDK (`BILLED_REQUEST_RETRIES` in send.ts).
   */
  maxRetries?: number | undefined;
  timeoutMs?: number | undefined;
  fetch?: typeof fetch | undefined;
  defaultHeaders?: Record<string, string> | undefined;
}

/**
 * The real SDK client. forkcache never re-implements HTTP: raw bodies go through
 * `client.post`, which passes typed arrays to `fetch` untouched.
 */
export function createAnthropicClient(options: ClientOptions = {}): Anthropic {
  return new Anthropic({
    ...(options.baseURL !== undefined ? { baseURL: options.baseURL } : {}),
    apiKey: options.apiKey || process.env['ANTHROPIC_API_KEY'] || 'no-key',
    maxRetries: options.maxRetries ?? 0,
    timeout: options.timeoutMs ?? 600_000,
    ...(options.fetch ? { fetch: options.fetch } : {}),
    ...(options.defaultHeaders ? { defaultHeaders: options.defaultHeaders } : {}),
  });
}
