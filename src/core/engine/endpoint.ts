import { ForkcacheError } from '../util/errors.ts';
import { type ProviderId, providerWireOf } from '../wire/providers.ts';

/**
 * An engine with neither a key nor an endpoint would send every fork to the real API
 * unauthenticated and fail each one with a bare `Connection error.` or a 401: refuse it here,
 * naming both ways out. A base URL alone is fine (the emulator, a local engine take any key).
 */
export function assertEndpoint(provider: ProviderId, baseURL: string | undefined, apiKey: string | undefined): void {
  const { keyEnv, baseUrlEnv } = providerWireOf(provider).endpoint;
  const env = { key: keyEnv, base: baseUrlEnv };
  const set = (names: readonly string[]): boolean => names.some((name) => Boolean(process.env[name]));
  if (baseURL !== undefined || apiKey || set(env.key) || set(env.base)) return;
  throw new ForkcacheError(
    'INVALID_OPTION',
    `ForkEngine options: apiKey: no API key and no baseURL for provider '${provider}'. Give apiKey (or set ${env.key.join('/')}) to use the real API, or baseURL (or ${env.base.join('/')}) to point the engine at an endpoint: for the local emulator, baseURL: (await startEmulator()).url`,
    { data: { field: 'apiKey' } },
  );
}
