import type { ProviderAdapter } from '../core/engine/provider.ts';
import type { ApiEndpoint, ForkWire, WirePrefix } from '../core/loop/transport.ts';
import { DEFAULT_PROVIDER, type ProviderId } from '../core/wire/providers.ts';
import { anthropicAdapter } from './anthropic/adapter.ts';
import { llamaCppAdapter } from './llama-cpp/adapter.ts';
import { dashscopeAdapter, deepseekAdapter, openaiAdapter, openaiCompatibleAdapter } from './openai/adapter.ts';

/**
 * Every provider forkcache speaks, one line each: the adapter its folder exports. A new
 * provider is its folder (src/providers/<id>/adapter.ts) and its line here; its id then reaches
 * `ProviderId`, the schemas, the flags and the help through the declaration below. Core never
 * imports this file: the public entry (src/index.ts), the CLI and the fork worker hand it to
 * core (`useProviders`).
 */
export const PROVIDERS = {
  anthropic: anthropicAdapter,
  openai: openaiAdapter,
  dashscope: dashscopeAdapter,
  deepseek: deepseekAdapter,
  'openai-compatible': openaiCompatibleAdapter,
  'llama-cpp': llamaCppAdapter,
} satisfies Readonly<Record<string, ProviderAdapter>>;

declare module '../core/wire/providers.ts' {
  interface ProviderRegister {
    providers: typeof PROVIDERS;
  }
}

/** The ids of the providers forkcache speaks, in the registry's order. */
export const PROVIDER_IDS = Object.freeze(Object.keys(PROVIDERS)) as readonly ProviderId[];

/** The wire of one fork: its provider's body layout and transport, behind the drift check. */
export function openForkWire(api: ApiEndpoint, prefix: WirePrefix): ForkWire {
  return PROVIDERS[api.provider ?? DEFAULT_PROVIDER].openForkWire(api, prefix);
}
