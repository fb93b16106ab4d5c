import type { ProviderRegistry } from '../core/engine/provider.ts';
import type { ApiEndpoint, ForkWire, WirePrefix } from '../core/loop/transport.ts';
import { anthropicAdapter } from './anthropic/adapter.ts';
import { llamaCppAdapter } from './llama-cpp/adapter.ts';
import { dashscopeAdapter, deepseekAdapter, openaiAdapter, openaiCompatibleAdapter } from './openai/adapter.ts';

/**
 * Every provider forkcache speaks, one line each: the adapter its folder exports. Core never
 * imports this file: the public entries (src/index.ts, src/testing.ts, src/ai-sdk.ts), the CLI
 * and the fork worker hand it to core (`useProviders`, `runForkTask`).
 */
export const PROVIDERS: ProviderRegistry = {
  anthropic: anthropicAdapter,
  openai: openaiAdapter,
  dashscope: dashscopeAdapter,
  deepseek: deepseekAdapter,
  'openai-compatible': openaiCompatibleAdapter,
  'llama-cpp': llamaCppAdapter,
};

/** The wire of one fork: its provider's body layout and transport, behind the drift check. */
export function openForkWire(api: ApiEndpoint, prefix: WirePrefix): ForkWire {
  return PROVIDERS[api.provider ?? 'anthropic'].openForkWire(api, prefix);
}
