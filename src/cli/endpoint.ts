import { startEmulator } from '../integrations/emulator/start.ts';
import type { API_CHOICES } from './flag-table.ts';
import { ForkcacheError } from '../core/util/errors.ts';
import type { ModelCatalogue } from '../core/models/catalogue.ts';
import { isChatProvider, type ProviderId } from '../core/wire/providers.ts';
import { PROVIDERS } from '../providers/registry.ts';
import { chatEndpointFromEnv } from '../core/prefix/chat-dialects.ts';
import { dialectOf } from '../core/prefix/chat-dialects.ts';
import { emulatorApiOf } from './demo/provider-wire.ts';

/** `anthropic` is the historical name of "the provider's real API" (`real` says the same for any provider). */
export type ApiChoice = (typeof API_CHOICES)[number];

export interface Endpoint {
  baseURL: string;
  apiKey: string;
  kind: 'anthropic' | 'emulator' | Exclude<ProviderId, 'anthropic'>;
  provider: ProviderId;
  /** For the log line: where requests go. */
  label: string;
  close(): Promise<void>;
}

/** The real endpoint of a provider and its key variable, from the environment. */
function realEndpoint(provider: ProviderId): {
  baseURL: string;
  apiKey: string | undefined;
  keyName: string;
  label: string;
} {
  if (!isChatProvider(provider)) {
    return {
      baseURL: process.env['ANTHROPIC_BASE_URL'] ?? 'https://api.anthropic.com',
      apiKey: process.env['ANTHROPIC_API_KEY'],
      keyName: 'ANTHROPIC_API_KEY',
      label: 'the Anthropic API',
    };
  }
  const env = chatEndpointFromEnv(provider);
  return { ...env, keyName: dialectOf(provider).keyEnv.join(' or '), label: `the ${provider} API at ${env.baseURL}` };
}

/**
 * Where requests go: the provider's real API when its key is set (`ANTHROPIC_API_KEY`,
 * `OPENAI_API_KEY`, `DASHSCOPE_API_KEY`, `DEEPSEEK_API_KEY`), or with `--api real` (which
 * insists on it), else an embedded emulator started here in that provider's mode. A local
 * vLLM/SGLang or llama.cpp server (`openai-compatible`, `llama-cpp`) is real when `OPENAI_BASE_URL` names it.
 */
export async function openEndpoint(
  api: ApiChoice,
  emulator: { script: string; latency: 'off' | 'fast' | 'realistic' },
  catalogue?: ModelCatalogue,
  provider: ProviderId = 'anthropic',
): Promise<Endpoint> {
  const real = realEndpoint(provider);
  // An empty key is no key (tests and users clear a variable with KEY=), as before providers existed.
  const local = PROVIDERS[provider].local;
  const configured = local ? Boolean(process.env['OPENAI_BASE_URL']) : Boolean(real.apiKey);
  const insist = api === 'real' || api === 'anthropic';
  if (insist && !configured)
    throw new ForkcacheError('INVALID_FLAG', `--api ${api}: ${local ? 'OPENAI_BASE_URL' : real.keyName} is not set`, {
      data: { field: 'api' },
    });
  if (insist || (api === 'auto' && configured)) {
    return {
      baseURL: real.baseURL,
      apiKey: real.apiKey || 'no-key',
      kind: isChatProvider(provider) ? provider : 'anthropic',
      provider,
      label: real.label,
      close: async () => {},
    };
  }
  // A model the user priced with --model-table is one the stand-in API serves too.
  const server = await startEmulator({
    script: emulator.script,
    latency: emulator.latency,
    api: emulatorApiOf(provider),
    ...(catalogue ? { modelTable: catalogue } : {}),
  });
  const mode = isChatProvider(provider) ? `, ${provider} mode` : '';
  return {
    baseURL: isChatProvider(provider) ? `${server.url}/v1` : server.url,
    apiKey: 'emulator',
    kind: 'emulator',
    provider,
    label: `the embedded emulator at ${server.url} (script ${emulator.script}${mode}${configured ? '' : `; no ${real.keyName}`})`,
    close: () => server.close(),
  };
}
