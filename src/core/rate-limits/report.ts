import type { RateLimitHeaders } from './headers.ts';

/**
 * What a request is predicted to cost, sent with the permit request: the admission scheduler
 * turns bytes into tokens with the fan-out's measured ratio. `freshBytes` is what this fork has
 * not sent before (beyond the frozen head on its first request, beyond its last request's body
 * after): only that can be uncached or written once the shared prefix is warm.
 */
export interface RequestCost {
  bytes: number;
  freshBytes: number;
  maxTokens: number;
}

/** What came back for one request: the admission scheduler learns and settles from it. */
export interface RequestReport {
  /** HTTP status (200 once the response began); null when no response came (a reset, a timeout). */
  status: number | null;
  rateLimits?: RateLimitHeaders | undefined;
  /** `retry-after(-ms)` of an error response, in ms. */
  retryAfterMs?: number | undefined;
  /** `error.type` of an error body (`rate_limit_error`, `overloaded_error`, ...). */
  errorType?: string | undefined;
  /** `error.details.error_code` of a 429 (`ramp_limit_exceeded`, `enforced_spend_limit_reached`). */
  errorCode?: string | undefined;
  /** Usage of a completed response: what ITPM and OTPM really spent, and what it cost (the spend cap). */
  usage?:
    | {
        input_tokens: number;
        cache_creation_input_tokens: number;
        cache_read_input_tokens: number;
        output_tokens: number;
        /** The TTL split and billing modifiers, as the ledger's usage carries them. */
        cache_creation?: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number };
        service_tier?: string;
        inference_geo?: string;
        speed?: string;
      }
    | undefined;
}
