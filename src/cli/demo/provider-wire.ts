import type Anthropic from '@anthropic-ai/sdk';
import type { EmulatorApi } from '../../integrations/emulator/openai/rules.ts';
import type { ForkLayout } from '../../core/fork/layouts.ts';
import { isChatProvider, type ProviderId } from '../../core/wire/providers.ts';
import { createChatClient } from '../../providers/openai/client.ts';
import { dialectOf } from '../../core/prefix/chat-dialects.ts';
import { sendChatRequest } from '../../providers/openai/request.ts';

/**
 * The emulator mode standing in for a provider: a local vLLM/SGLang or llama.cpp server caches
 * automatically, like OpenAI (the emulator has no slots: a llama-cpp fan-out on it says so).
 */
export function emulatorApiOf(provider: ProviderId): EmulatorApi {
  return provider === 'openai-compatible' || provider === 'llama-cpp' ? 'openai' : provider;
}

/**
 * How the demo reaches the embedded emulator on a provider: the engine's base URL, the fork
 * layout (Qwen Code's on DashScope, its native provider), and how the parent agent sends.
 */
export function demoWire(
  provider: ProviderId,
  emulatorUrl: string,
  headers: Record<string, string>,
): {
  baseURL: string;
  layout: ForkLayout;
  send: ((request: Anthropic.MessageCreateParamsNonStreaming) => Promise<Anthropic.Message>) | undefined;
} {
  if (!isChatProvider(provider)) return { baseURL: emulatorUrl, layout: 'claude', send: undefined };
  const baseURL = `${emulatorUrl}/v1`;
  const client = createChatClient({ provider, baseURL, apiKey: 'demo', defaultHeaders: headers });
  const dialect = dialectOf(provider);
  return {
    baseURL,
    layout: provider === 'dashscope' ? 'qwen' : 'claude',
    send: (request) => sendChatRequest(client, request as Parameters<typeof sendChatRequest>[1], dialect),
  };
}
