import { CREDENTIAL_HEADERS } from './credentials.ts';

// The one list of credential headers (shared with the proxy's and the emulator's masking): an
// Azure `api-key` or a gateway cookie passed in `headers` must not reach a manifest either.
const SECRET = new Set(CREDENTIAL_HEADERS);

/** Headers without credentials: what may be written to disk (manifests) or to Redis (jobs). */
export function withoutCredentials(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !SECRET.has(name.toLowerCase())));
}
