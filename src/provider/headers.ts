const CREDENTIAL_HEADERS = /^(x-api-key|authorization)$/i;

/** Headers without credentials: what may be written to disk (manifests) or to Redis (jobs). */
export function withoutCredentials(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !CREDENTIAL_HEADERS.test(name)));
}
