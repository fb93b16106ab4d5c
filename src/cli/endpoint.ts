import { startEmulator } from '../integrations/emulator/start.ts';
import type { API_CHOICES } from './flag-table.ts';
import { ForkcacheError } from '../core/util/errors.ts';
import type { ModelCatalogue } from '../core/models/catalogue.ts';
import { DEFAULT_PROVIDER, endpointFromEnv, type ProviderId } from '../core/wire/providers.ts';
import { PROVIDERS } from '../providers/registry.ts';
import { emulatorApiOf } from './demo/provider-wire.ts';

/** `anthropic` is the historical name of "the provider's real API" (`real` says the same for any provider). */
export type ApiChoice = (typeof API_CHOICES)[number];

export interface Endpoint {
  baseURL: string;
  apiKey: string;
  /** The provider's real API, or the embedded emulator standing in for it. */
  kind: ProviderId | 'emulator';
  provider: ProviderId;
  /** For the log line: where requests go. */
  label: string;
  close(): Promise<void>;
}

/** The real endpoint of a provider and its key variable, from the environment. */
function realEndpoint(provider: ProviderId): {
  baseURL: string;
  apiKey: string | undefined;
  baseUrlFrom: string | undefined;
  keyName: string;
  label: string;
} {
  const { endpoint, local } = PROVIDERS[provider];
  const env = endpointFromEnv(endpoint);
  // a local server is named by its base URL; a hosted API by its key
  const keyName = (local ? endpoint.baseUrlEnv : endpoint.keyEnv).join(' or ');
  return { ...env, keyName, label: `the ${endpoint.title} API at ${env.baseURL}` };
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
  provider: ProviderId = DEFAULT_PROVIDER,
): Promise<Endpoint> {
  const real = realEndpoint(provider);
  // An empty key is no key (tests and users clear a variable with KEY=), as before providers existed.
  const { local, chat } = PROVIDERS[provider];
  const configured = local ? real.baseUrlFrom !== undefined : Boolean(real.apiKey);
  const insist = api === 'real' || api === 'anthropic';
  if (insist && !configured)
    throw new ForkcacheError('INVALID_FLAG', `--api ${api}: ${real.keyName} is not set`, {
      data: { field: 'api' },
    });
  if (insist || (api === 'auto' && configured)) {
    return {
      baseURL: real.baseURL,
      apiKey: real.apiKey || 'no-key',
      kind: provider,
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
  const mode = chat ? `, ${provider} mode` : '';
  return {
    baseURL: chat ? `${server.url}/v1` : server.url,
    apiKey: 'emulator',
    kind: 'emulator',
    provider,
    label: `the embedded emulator at ${server.url} (script ${emulator.script}${mode}${configured ? '' : `; no ${real.keyName}`})`,
    close: () => server.close(),
  };
}
