import type Anthropic from '@anthropic-ai/sdk';
import { EMULATOR_APIS, type EmulatorApi } from '../../integrations/emulator/openai/rules.ts';
import type { ForkLayout } from '../../core/fork/layouts.ts';
import type { ProviderId } from '../../core/wire/providers.ts';
import { createChatClient } from '../../providers/openai/client.ts';
import { sendChatRequest } from '../../providers/openai/request.ts';
import { adapterOf } from '../../core/engine/providers-registered.ts';

/**
 * The emulator mode standing in for a provider, from its adapter's facts: the emulator's own
 * mode when it has one by the provider's id, else the Messages API's for a provider that speaks
 * it, DashScope's for a Chat provider that caches at markers, OpenAI's (an automatic cache) for
 * the rest: a local vLLM/SGLang or llama.cpp server (the emulator has no slots: a llama-cpp
 * fan-out on it says so).
 */
export function emulatorApiOf(provider: ProviderId): EmulatorApi {
  const own = EMULATOR_APIS.find((api) => api === provider);
  if (own) return own;
  const { chat } = adapterOf(provider);
  return !chat ? 'anthropic' : chat.markers ? 'dashscope' : 'openai';
}

/**
 * How the demo reaches the embedded emulator on a provider: the engine's base URL, the fork
 * layout (the provider's own agent's: Qwen Code's on DashScope), and how the parent agent sends.
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
  const adapter = adapterOf(provider);
  const dialect = adapter.chat;
  const layout = adapter.nativeLayout ?? 'claude';
  if (!dialect) return { baseURL: emulatorUrl, layout, send: undefined };
  const baseURL = `${emulatorUrl}/v1`;
  const client = createChatClient({ provider: adapter, baseURL, apiKey: 'demo', defaultHeaders: headers });
  return {
    baseURL,
    layout,
    send: (request) => sendChatRequest(client, request as Parameters<typeof sendChatRequest>[1], dialect),
  };
}
