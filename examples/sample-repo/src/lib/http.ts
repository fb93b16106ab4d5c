export interface RequestOptions {
  retries?: number;
  timeoutMs?: number;
}

/** Fetch JSON from an internal service, retrying transient failures. */
export async function fetchData<T>(path: string, options: RequestOptions = {}): Promise<T> {
  const retries = options.retries ?? 2;
  let lastError: unknown;
  for (let attempt = 0; attempt <= retries; attempt++) {
    try {
      const response = await fetch(`https://internal.example${path}`, { signal: AbortSignal.timeout(options.timeoutMs ?? 5000) });
      if (!response.ok) throw new Error(`HTTP ${response.status} for ${path}`);
      return (await response.json()) as T;
    } catch (err) {
      lastError = err;
    }
  }
  throw lastError;
}
