import { ForkcacheError } from '../util/errors.ts';
import { endpointFromEnv, type ProviderId, providerWireOf } from '../wire/providers.ts';

/**
 * An engine with neither a key nor an endpoint would send every fork to the real API
 * unauthenticated and fail each one with a bare `Connection error.` or a 401: refuse it here,
 * naming both ways out. A base URL alone is fine (the emulator, a local engine take any key).
 */
export function assertEndpoint(provider: ProviderId, baseURL: string | undefined, apiKey: string | undefined): void {
  const { endpoint } = providerWireOf(provider);
  const env = endpointFromEnv(endpoint);
  if (baseURL !== undefined || apiKey || env.apiKey || env.baseUrlFrom) return;
  throw new ForkcacheError(
    'INVALID_OPTION',
    `ForkEngine options: apiKey: no API key and no baseURL for provider '${provider}'. Give apiKey (or set ${endpoint.keyEnv.join('/')}) to use the real API, or baseURL (or ${endpoint.baseUrlEnv.join('/')}) to point the engine at an endpoint: for the local emulator, baseURL: (await startEmulator()).url`,
    { data: { field: 'apiKey' } },
  );
}
