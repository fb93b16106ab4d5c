import { normalizeUsage } from '../../../core/ledger/usage.ts';
import type { ServerResponse } from 'node:http';
import type { Clock } from '../../../core/util/clock.ts';
import { costNano, nanoToUsd } from '../../../core/ledger/cost.ts';
import type { ModelCatalogue, ModelEntry } from '../../../core/models/catalogue.ts';
import {
  formatRateLimitHeaders,
  RAMP_LIMIT_EXCEEDED,
  type RateLimitHeaders,
  SPEND_LIMIT_REACHED,
} from '../../../core/rate-limits/headers.ts';
import { limitsFor, type RateLimitTable } from '../../../core/rate-limits/presets.ts';
import { ApiError } from '../api-error.ts';
import type { InputUsage } from '../cache/plan.ts';
import type { ResponseUsage } from '../types.ts';
import { KeyState } from './key-state.ts';

/** What an admitted request reports back while it runs. */
export interface AdmittedRequest {
  /** Output tokens as they are generated (OTPM counts them then, not `max_tokens`). */
  output(tokens: number): void;
  /** The response's usage, once known: added to the spend. */
  settle(usage: ResponseUsage): void;
}

const NOT_LIMITED: AdmittedRequest = { output() {}, settle() {} };
const thousands = (n: number): string => Math.round(n).toLocaleString('en-US');

function rateLimited(message: string, retryAfterMs: number | null, errorCode?: string): ApiError {
  const error = new ApiError(
    'EMULATOR_RATE_LIMITED',
    'rate_limit_error',
    message,
    errorCode ? { errorCode } : {},
    errorCode ? { error_code: errorCode } : undefined,
  );
  // The API sends whole seconds, at least 1.
  error.retryAfter = retryAfterMs === null ? null : Math.max(1, Math.ceil(retryAfterMs / 1000));
  return error;
}

/**
 * The API's rate limits, per API key and model class (the catalogue's family): token buckets
 * for requests, input tokens (uncached input + cache writes; reads only where the class says
 * they count) and output tokens (spent as they are generated), continuously refilled on the
 * emulator's clock. Every messages response carries the `anthropic-ratelimit-*` headers.
 */
export class RateLimiter {
  readonly #clock: Clock;
  readonly #catalogue: ModelCatalogue;
  readonly #states = new Map<string, KeyState>();
  readonly #spent = new Map<string, number>();
  #table: RateLimitTable | undefined;

  constructor(table: RateLimitTable | undefined, clock: Clock, catalogue: ModelCatalogue) {
    this.#table = table;
    this.#clock = clock;
    this.#catalogue = catalogue;
  }

  get table(): RateLimitTable | undefined {
    return this.#table;
  }

  /** Raise, lower or lift (undefined) the spend cap, as a billing change would. */
  setSpendLimit(usd: number | undefined): void {
    if (this.#table) this.#table = { ...this.#table, spendLimitUsd: usd };
  }

  /** USD billed to a key so far. */
  spent(key: string): number {
    return this.#spent.get(key) ?? 0;
  }

  #state(key: string, model: ModelEntry, now: number): KeyState | undefined {
    const limits = this.#table && limitsFor(this.#table, model.family);
    if (!this.#table || !limits) return undefined;
    const id = `${key}\n${model.family}`;
    let state = this.#states.get(id);
    if (!state) this.#states.set(id, (state = new KeyState(limits, this.#table, now)));
    return state;
  }

  /**
   * Admit one messages request or throw its 429: the spend cap first (no `retry-after`: it
   * will not heal within the month), then the acceleration limit, then the three buckets.
   * The headers go on the response either way.
   */
  admit(res: ServerResponse, key: string, model: ModelEntry, usage: InputUsage): AdmittedRequest {
    const table = this.#table;
    const now = this.#clock.now();
    const state = this.#state(key, model, now);
    if (!table || !state) return NOT_LIMITED;
    const itpmCost =
      usage.input_tokens +
      usage.cache_creation_input_tokens +
      (state.limits.cacheReadsCount ? usage.cache_read_input_tokens : 0);
    try {
      if (table.spendLimitUsd !== undefined && this.spent(key) >= table.spendLimitUsd) {
        throw rateLimited(
          `You have reached your specified API usage limits ($${table.spendLimitUsd}). You will regain access on the 1st of next month.`,
          null,
          SPEND_LIMIT_REACHED,
        );
      }
      if (table.ramp) {
        const wait = state.rampWait(table.ramp, now);
        if (wait > 0)
          throw rateLimited(
            'Your usage increased too quickly: ramp up your request rate more gradually (acceleration limit).',
            wait,
            RAMP_LIMIT_EXCEEDED,
          );
      }
      const checks: [string, number, number][] = [
        [`${thousands(state.limits.rpm)} requests per minute`, state.rpm.msUntil(1, now), 1],
        [`${thousands(state.limits.itpm)} input tokens per minute`, state.itpm.msUntil(itpmCost, now), itpmCost],
        [`${thousands(state.limits.otpm)} output tokens per minute`, state.otpm.msUntil(1, now), 1],
      ];
      for (const [what, wait] of checks) {
        if (wait > 0) {
          throw rateLimited(
            `This request would exceed the rate limit for your organization of ${what} (model class ${model.family}). Reduce the prompt length or the maximum tokens requested, or try again later.`,
            Number.isFinite(wait) ? wait : 60_000,
          );
        }
      }
      state.rpm.take(1, now);
      state.itpm.take(itpmCost, now);
      if (table.ramp) state.countRamp();
    } finally {
      this.#setHeaders(res, state, now);
    }
    return {
      output: (tokens) => state.otpm.take(tokens, this.#clock.now()),
      settle: (final) => {
        const usd = nanoToUsd(costNano(normalizeUsage(final), model, this.#clock.now(), this.#catalogue).total);
        this.#spent.set(key, this.spent(key) + usd);
      },
    };
  }

  #setHeaders(res: ServerResponse, state: KeyState, now: number): void {
    // The API rounds remaining tokens to the nearest thousand; its tables are all >= 100K a
    // minute. Small tables (tests, a workspace cap) keep exact figures so that they mean something.
    const tokens = (n: number, limit: number): number =>
      limit >= 100_000 ? Math.round(n / 1000) * 1000 : Math.floor(n);
    const bucket = (b: KeyState['rpm'], round: (n: number, limit: number) => number) => ({
      limit: b.perMinute,
      remaining: round(Math.max(0, b.level(now)), b.perMinute),
      resetAt: now + b.msUntil(b.capacity, now),
    });
    const input = bucket(state.itpm, tokens);
    const output = bucket(state.otpm, tokens);
    const headers: RateLimitHeaders = {
      requests: bucket(state.rpm, (n) => Math.floor(n)),
      'input-tokens': input,
      'output-tokens': output,
      // the combined figure is the most restrictive of the two
      tokens: input.remaining / input.limit <= output.remaining / output.limit ? input : output,
    };
    for (const [name, value] of Object.entries(formatRateLimitHeaders(headers))) res.setHeader(name, value);
  }
}
