import type { ServerResponse } from 'node:http';
import type { ModelEntry } from '../../../core/models/catalogue.ts';
import type { AdmittedRequest } from '../rate-limits/limiter.ts';
import type { EmulatorCore } from '../server/core.ts';
import type { ResponseUsage } from '../types.ts';

/** `6m0s`, `1.5s`, `120ms`: the duration format of OpenAI's reset headers. */
function formatResetDuration(ms: number): string {
  if (ms <= 0) return '0s';
  if (ms < 1000) return `${Math.ceil(ms)}ms`;
  const seconds = ms / 1000;
  if (seconds < 60) return `${Number(seconds.toFixed(3))}s`;
  const minutes = Math.floor(seconds / 60);
  return `${minutes}m${Math.round(seconds - minutes * 60)}s`;
}

const KINDS = [
  ['requests', 'requests'],
  // One token budget on these APIs; the Messages API's combined `tokens` bucket is the closest.
  ['tokens', 'tokens'],
] as const;

/**
 * Admit a request through the emulator's one rate limiter (token buckets per key and model
 * class, the same `--rate-limits` tables), then restate its `anthropic-ratelimit-*` headers
 * in OpenAI's form: `x-ratelimit-{limit,remaining,reset}-{requests,tokens}`. A 429 keeps its
 * headers too (the limiter sets them before it throws).
 */
export function admitOpenAi(
  core: EmulatorCore,
  res: ServerResponse,
  key: string,
  model: ModelEntry,
  usage: ResponseUsage,
): AdmittedRequest {
  const input = {
    input_tokens: usage.input_tokens,
    cache_creation_input_tokens: usage.cache_creation_input_tokens,
    cache_read_input_tokens: usage.cache_read_input_tokens,
    ephemeral_5m_input_tokens: usage.cache_creation_input_tokens,
    ephemeral_1h_input_tokens: 0,
  };
  try {
    return core.rateLimits.admit(res, key, model, input);
  } finally {
    restate(res, core.clock.now());
  }
}

function restate(res: ServerResponse, now: number): void {
  for (const [from, to] of KINDS) {
    const limit = res.getHeader(`anthropic-ratelimit-${from}-limit`);
    const remaining = res.getHeader(`anthropic-ratelimit-${from}-remaining`);
    const reset = res.getHeader(`anthropic-ratelimit-${from}-reset`);
    if (limit !== undefined) res.setHeader(`x-ratelimit-limit-${to}`, String(limit));
    if (remaining !== undefined) res.setHeader(`x-ratelimit-remaining-${to}`, String(remaining));
    if (reset !== undefined)
      res.setHeader(`x-ratelimit-reset-${to}`, formatResetDuration(Date.parse(String(reset)) - now));
  }
  for (const name of res.getHeaderNames()) if (name.startsWith('anthropic-ratelimit-')) res.removeHeader(name);
}
