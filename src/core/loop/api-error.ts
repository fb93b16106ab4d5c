import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';

/**
 * The two SDKs' error classes, seen as one: both have an HTTP `status` (undefined for a
 * broken stream), `headers`, the parsed `error` body and a request id. The retry and
 * rate-limit rules read these, whichever provider the fork speaks.
 */
type AnyApiError = InstanceType<typeof Anthropic.APIError> | InstanceType<typeof OpenAI.APIError>;

export function isApiError(err: unknown): err is AnyApiError {
  return err instanceof Anthropic.APIError || err instanceof OpenAI.APIError;
}

export function isUserAbort(err: unknown): boolean {
  return err instanceof Anthropic.APIUserAbortError || err instanceof OpenAI.APIUserAbortError;
}

export function isConnectionError(err: unknown): boolean {
  return err instanceof Anthropic.APIConnectionError || err instanceof OpenAI.APIConnectionError;
}

/** The error's type as the body names it: Anthropic's `error.type`, OpenAI's `type` (from the body's `error` object). */
export function apiErrorType(err: AnyApiError): string | undefined {
  if (err instanceof OpenAI.APIError) return typeof err.type === 'string' ? err.type : undefined;
  const type = (err.error as { error?: { type?: unknown } } | undefined)?.error?.type;
  return typeof type === 'string' ? type : undefined;
}
