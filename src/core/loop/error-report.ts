import { apiErrorType, isApiError } from './api-error.ts';
import { parseRateLimitHeaders, parseRetryAfterMs } from '../rate-limits/headers.ts';
import type { RequestReport } from '../rate-limits/report.ts';

/** The report of a request that failed: status, rate-limit headers, `retry-after` and the 429's error code. */
export function reportOfError(err: unknown): RequestReport {
  if (!isApiError(err)) return { status: null };
  const body = err.error as { error?: { type?: unknown; details?: { error_code?: unknown } } } | undefined;
  const headers = err.headers;
  const errorType = apiErrorType(err);
  const errorCode = typeof body?.error?.details?.error_code === 'string' ? body.error.details.error_code : undefined;
  return {
    // a mid-stream `event: error` has no status: the request was admitted, its stream broke
    status: err.status ?? null,
    ...(headers ? { rateLimits: parseRateLimitHeaders(headers), retryAfterMs: parseRetryAfterMs(headers) } : {}),
    errorType,
    errorCode,
  };
}
