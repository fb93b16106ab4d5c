import type { UsageInput } from './usage.ts';

/** The usage object of a Responses API response, with its cache fields. */
export interface ResponsesUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  input_tokens_details?: {
    cached_tokens?: number | null;
    cache_write_tokens?: number | null;
    cache_write_tokens_details?: { ttl_30m_tokens?: number | null; ttl_12h_tokens?: number | null } | null;
  } | null;
}

/**
 * Responses usage in the ledger's shape: read (`cached_tokens`), written (`cache_write_tokens`,
 * by lifetime from `cache_write_tokens_details`: 30 minutes or 12 hours), uncached (the rest of
 * `input_tokens`, which counts every input token) and output. A write total without a breakdown
 * is recorded as a 30-minute write, the API's default lifetime.
 */
export function fromResponsesUsage(usage: ResponsesUsage | null | undefined): UsageInput {
  const input = usage?.input_tokens ?? 0;
  const details = usage?.input_tokens_details;
  const read = details?.cached_tokens ?? 0;
  const written = details?.cache_write_tokens ?? 0;
  const byTtl = details?.cache_write_tokens_details;
  const h12 = byTtl?.ttl_12h_tokens ?? 0;
  const m30 = byTtl && (byTtl.ttl_30m_tokens ?? 0) + h12 === written ? (byTtl.ttl_30m_tokens ?? 0) : written - h12;
  return {
    input_tokens: Math.max(0, input - read - written),
    cache_creation_input_tokens: written,
    cache_read_input_tokens: read,
    output_tokens: usage?.output_tokens ?? 0,
    ...(written > 0
      ? {
          cache_creation: {
            ephemeral_5m_input_tokens: 0,
            ephemeral_1h_input_tokens: 0,
            ttl_30m_input_tokens: Math.max(0, m30),
            ttl_12h_input_tokens: Math.min(h12, written),
          },
        }
      : {}),
  };
}
