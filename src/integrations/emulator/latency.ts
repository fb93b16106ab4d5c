import { z } from 'zod';
import { parseOrThrow } from '../../core/util/validation.ts';

/**
 * How long a response takes. Time to first token (TTFT) grows with the input the model must
 * prefill; cache reads are far cheaper than uncached tokens; output streams at a fixed rate:
 *
 *   TTFT = baseMs + uncachedTokens × prefillMsPerToken + cacheReadTokens × cacheReadMsPerToken
 *   output time = outputTokens / outputTokensPerSecond
 *
 * Uncached tokens are `input_tokens + cache_creation_input_tokens` (a cache write is a prefill).
 * This is what makes warm-first versus simultaneous dispatch measurable on the emulator.
 */
export interface LatencyProfile {
  baseMs: number;
  prefillMsPerToken: number;
  cacheReadMsPerToken: number;
  outputTokensPerSecond: number;
  /** A `slow` fault multiplies TTFT by this and adds `slowExtraMs`. */
  slowFactor: number;
  slowExtraMs: number;
}

export type LatencyName = 'off' | 'fast' | 'realistic';
const LATENCY_NAMES = ['off', 'fast', 'realistic'] as const satisfies readonly LatencyName[];
/** A latency flag or plan field: one of the profile names. */
export const latencyNameSchema = z.enum(LATENCY_NAMES, { error: `expected ${LATENCY_NAMES.join(', ')}` });

/**
 * `realistic`: a mid-size Claude model on a quiet day — ~400 ms base, 0.25 ms per uncached
 * input token (100k uncached tokens ≈ 25 s), 0.02 ms per cached token (12.5× cheaper), 60
 * output tokens/s. Orders of magnitude from public latency reports, not measurements.
 * `fast`: the same shape ~100× faster, for demos and benches. `off`: no waiting at all (tests).
 */
export const LATENCY_PROFILES: Readonly<Record<LatencyName, Readonly<LatencyProfile>>> = {
  off: {
    baseMs: 0,
    prefillMsPerToken: 0,
    cacheReadMsPerToken: 0,
    outputTokensPerSecond: Infinity,
    slowFactor: 1,
    slowExtraMs: 0,
  },
  fast: {
    baseMs: 4,
    prefillMsPerToken: 0.0025,
    cacheReadMsPerToken: 0.0002,
    outputTokensPerSecond: 6000,
    slowFactor: 10,
    slowExtraMs: 100,
  },
  realistic: {
    baseMs: 400,
    prefillMsPerToken: 0.25,
    cacheReadMsPerToken: 0.02,
    outputTokensPerSecond: 60,
    slowFactor: 10,
    slowExtraMs: 10_000,
  },
};

const profileSchema = z.strictObject({
  baseMs: z.number().nonnegative(),
  prefillMsPerToken: z.number().nonnegative(),
  cacheReadMsPerToken: z.number().nonnegative(),
  // Infinity (no output pacing) is allowed: zod's number() rejects it, hence the custom check.
  outputTokensPerSecond: z.custom<number>(
    (v) => typeof v === 'number' && v > 0,
    'expected a positive number (Infinity: no pacing)',
  ),
  slowFactor: z.number().min(1).default(10),
  slowExtraMs: z.number().nonnegative().default(0),
});

/** A preset by name, or a custom profile (validated; slow-fault fields default). */
export function resolveLatency(latency: LatencyName | Partial<LatencyProfile> | undefined): LatencyProfile {
  if (latency === undefined) return { ...LATENCY_PROFILES.off };
  if (typeof latency === 'string') {
    const name = parseOrThrow(latencyNameSchema, latency, 'INVALID_OPTION', 'latency');
    return { ...LATENCY_PROFILES[name] };
  }
  return parseOrThrow(profileSchema, latency, 'INVALID_OPTION', 'latency');
}

interface TtftInput {
  uncachedTokens: number;
  cacheReadTokens: number;
  slow?: boolean;
}

/** Time to first token, in ms. */
export function timeToFirstTokenMs(profile: LatencyProfile, input: TtftInput): number {
  const ms =
    profile.baseMs +
    input.uncachedTokens * profile.prefillMsPerToken +
    input.cacheReadTokens * profile.cacheReadMsPerToken;
  return input.slow ? ms * profile.slowFactor + profile.slowExtraMs : ms;
}

/** Time to stream `tokens` output tokens, in ms. */
export function outputMs(profile: LatencyProfile, tokens: number): number {
  return Number.isFinite(profile.outputTokensPerSecond) ? (tokens / profile.outputTokensPerSecond) * 1000 : 0;
}
