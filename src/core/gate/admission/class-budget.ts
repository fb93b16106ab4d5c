import { TokenBucket } from '../../rate-limits/bucket.ts';
import { RAMP_LIMIT_EXCEEDED, type RateLimitHeaders, SPEND_LIMIT_REACHED } from '../../rate-limits/headers.ts';
import type { RequestReport } from '../../rate-limits/report.ts';
import { DEFAULT_RETRY_AFTER, retryWaitMs, type RetryAfterPolicy } from './retry-wait.ts';

/** What one request reserves: input tokens that count toward ITPM, and an output estimate. */
export interface Cost {
  itpm: number;
  otpm: number;
}

type Kind = 'requests' | 'input-tokens' | 'output-tokens';
const KINDS: readonly Kind[] = ['requests', 'input-tokens', 'output-tokens'];

/** The API's acceleration window is not published: the ramp control counts over 10 s. */
const RAMP_WINDOW_MS = 10_000;
/**
 * After a ramp error, a window may carry at most 1.5 × what the window before it carried (the
 * API allows doubling; an idle window starts again from the floor, as the API's does).
 */
const RAMP_GROWTH = 1.5;
/** Ramp control ends once a window may carry this many requests (or the RPM bucket's share of a window, if more). */
const RAMP_DONE = 64;
/** 529 (global load): one backoff for all, 0.5 s doubling to 30 s. */
const OVERLOAD_BASE_MS = 500;
const OVERLOAD_MAX_MS = 30_000;

interface BudgetCounters {
  http429: number;
  http529: number;
  rampErrors: number;
  /** Global backoffs started (a 429's `retry-after`, a 529, a ramp error). */
  backoffs: number;
}

/** A class's limits and what is in use now (per-minute figures; `used` = what the bucket is short of full). */
export interface BudgetSnapshot {
  limits: { rpm?: number | undefined; itpm?: number | undefined; otpm?: number | undefined };
  used: { rpm: number; itpm: number; otpm: number };
  blockedMs: number;
  rampCap: number | undefined;
  burstShare: number;
}

/**
 * The budget of one model class as the scheduler sees it: token buckets learned from the
 * `anthropic-ratelimit-*` headers (none until a response carries them: no limit is assumed),
 * the one global backoff after a 429 or 529, the ramp allowance after `ramp_limit_exceeded`,
 * and the stop on `enforced_spend_limit_reached`.
 */
export class ClassBudget {
  readonly #buckets = new Map<Kind, TokenBucket>();
  /** Share of a minute's budget a bucket may spend at once; halved when the API enforces a shorter window than we assumed. */
  #burstShare = 1;
  #blockedUntil = Number.NEGATIVE_INFINITY;
  #overloads = 0;
  /** Consecutive 429s (a success resets it): the backoff doubles with them when `retry-after` is unreadable. */
  #limited = 0;
  readonly #policy: RetryAfterPolicy;
  readonly #random: () => number;
  #ramp: { floor: number; since: number } | undefined;
  #recent: number[] = [];
  #outputMean: number | undefined;
  stopped: { errorCode: string; at: number } | undefined;
  readonly counters: BudgetCounters = { http429: 0, http529: 0, rampErrors: 0, backoffs: 0 };

  constructor(policy: RetryAfterPolicy = DEFAULT_RETRY_AFTER, random: () => number = Math.random) {
    this.#policy = policy;
    this.#random = random;
  }

  /** Output tokens to reserve for a request (the running mean once known; `max_tokens` counts only as a bound). */
  outputEstimate(maxTokens: number): number {
    return Math.min(maxTokens, Math.ceil(this.#outputMean ?? 1024));
  }

  /** Milliseconds before `cost` may be admitted (0: now). */
  waitMs(cost: Cost, now: number): number {
    let wait = Math.max(0, this.#blockedUntil - now);
    const need: Record<Kind, number> = { requests: 1, 'input-tokens': cost.itpm, 'output-tokens': cost.otpm };
    for (const [kind, bucket] of this.#buckets) {
      // a request larger than the bucket waits for a full bucket, then goes (the API admits it on an estimate)
      wait = Math.max(wait, bucket.msUntil(Math.min(need[kind], bucket.capacity), now));
    }
    const cap = this.#rampCap(now);
    if (cap !== undefined) {
      const window = this.#recent.filter((t) => t > now - RAMP_WINDOW_MS);
      if (window.length >= cap) wait = Math.max(wait, window[window.length - cap]! + RAMP_WINDOW_MS - now);
    }
    return wait;
  }

  take(cost: Cost, now: number): void {
    this.#buckets.get('requests')?.take(1, now);
    this.#buckets.get('input-tokens')?.take(cost.itpm, now);
    this.#buckets.get('output-tokens')?.take(cost.otpm, now);
    this.#recent.push(now);
    if (this.#recent.length > 4096 || this.#recent[0]! < now - 60_000)
      this.#recent = this.#recent.filter((t) => t > now - 2 * RAMP_WINDOW_MS);
  }

  /**
   * Learn limits and levels from a response's headers. `remaining` was true when the API
   * admitted the request (`sentAt`); the bucket has refilled since. The level kept is the
   * lower of ours (which knows our later reservations) and the API's (which knows everyone's).
   */
  learn(headers: RateLimitHeaders | undefined, sentAt: number, now: number): void {
    if (!headers) return;
    for (const kind of KINDS) {
      const h = headers[kind];
      if (!h || !(h.limit > 0)) continue;
      const seen = Math.min(h.limit, h.remaining + (Math.max(0, now - sentAt) * h.limit) / 60_000);
      const bucket = this.#buckets.get(kind);
      if (!bucket || bucket.perMinute !== h.limit) {
        const capacity = h.limit * this.#burstShare;
        this.#buckets.set(kind, new TokenBucket(h.limit, capacity, now, Math.min(capacity, seen)));
      } else bucket.set(Math.min(bucket.level(now), seen), now);
    }
  }

  /** A request ended: settle its reservation from the usage, or react to its error. */
  settle(cost: Cost, report: RequestReport | undefined, sentAt: number, now: number): void {
    if (!report) return;
    this.learn(report.rateLimits, sentAt, now);
    if (report.status === 200) this.#overloads = this.#limited = 0;
    if (report.usage) {
      const u = report.usage;
      this.#buckets.get('input-tokens')?.take(u.input_tokens + u.cache_creation_input_tokens - cost.itpm, now);
      this.#buckets.get('output-tokens')?.take(u.output_tokens - cost.otpm, now);
      this.#outputMean =
        this.#outputMean === undefined ? u.output_tokens : 0.8 * this.#outputMean + 0.2 * u.output_tokens;
      return;
    }
    if (report.status === 429) this.#rateLimited(cost, report, sentAt, now);
    else if (report.status === 529) {
      this.counters.http529++;
      this.#overloads++;
      const doubling = Math.min(OVERLOAD_MAX_MS, OVERLOAD_BASE_MS * 2 ** Math.min(30, this.#overloads - 1));
      // a 529's retry-after, if it sends one, within the same bounds; else 0.5 s doubling to 30 s
      this.#backoff(
        now +
          retryWaitMs(
            report.retryAfterMs ?? doubling,
            this.#overloads,
            { ...this.#policy, floorMs: Math.min(this.#policy.floorMs, OVERLOAD_BASE_MS) },
            this.#random,
          ),
      );
    }
  }

  #rateLimited(cost: Cost, report: RequestReport, sentAt: number, now: number): void {
    this.counters.http429++;
    this.#limited++;
    // a refused request is not part of the rate the API saw (its ramp counts what it accepted)
    const i = this.#recent.lastIndexOf(sentAt);
    if (i >= 0) this.#recent.splice(i, 1);
    // a rejected request spent no tokens
    this.#buckets.get('input-tokens')?.take(-cost.itpm, now);
    this.#buckets.get('output-tokens')?.take(-cost.otpm, now);
    if (report.errorCode === SPEND_LIMIT_REACHED) {
      this.stopped ??= { errorCode: SPEND_LIMIT_REACHED, at: now };
      return;
    }
    if (report.errorCode === RAMP_LIMIT_EXCEEDED) {
      this.counters.rampErrors++;
      const sent = this.#recent.filter((t) => t > now - RAMP_WINDOW_MS).length + 1;
      this.#ramp = { floor: Math.max(1, Math.floor(Math.min(sent, this.#ramp?.floor ?? sent) / 2)), since: now };
      this.#backoff(now + retryWaitMs(report.retryAfterMs ?? RAMP_WINDOW_MS, 1, this.#policy, this.#random));
      return;
    }
    // Our buckets said yes and the API said no: it enforces a shorter window than a minute
    // (or someone else spends the same budget). Burst less from now on.
    this.#burstShare = Math.max(1 / 60, this.#burstShare / 2);
    for (const [kind, b] of this.#buckets)
      this.#buckets.set(
        kind,
        new TokenBucket(
          b.perMinute,
          b.perMinute * this.#burstShare,
          now,
          Math.min(b.level(now), b.perMinute * this.#burstShare),
        ),
      );
    // retry-after within [floor, ceiling] plus jitter; unreadable or absent: the floor doubling per 429
    this.#backoff(now + retryWaitMs(report.retryAfterMs, this.#limited, this.#policy, this.#random));
  }

  #backoff(until: number): void {
    if (until > this.#blockedUntil) {
      this.#blockedUntil = until;
      this.counters.backoffs++;
    }
  }

  /** Requests allowed in the sliding window now: the floor, or 1.5 × what the window before carried. */
  #rampCap(now: number): number | undefined {
    if (!this.#ramp) return undefined;
    // only what was sent since the last ramp error counts as a basis: the burst the API refused does not
    const since = this.#ramp.since;
    const before = this.#recent.filter(
      (t) => t > since && t > now - 2 * RAMP_WINDOW_MS && t <= now - RAMP_WINDOW_MS,
    ).length;
    const cap = Math.max(this.#ramp.floor, Math.ceil(RAMP_GROWTH * before));
    const rpm = this.#buckets.get('requests')?.perMinute ?? 0;
    if (cap >= Math.max(RAMP_DONE, (rpm * RAMP_WINDOW_MS) / 60_000)) {
      this.#ramp = undefined; // no longer below what the buckets allow: the ramp is over
      return undefined;
    }
    return cap;
  }

  snapshot(now: number): BudgetSnapshot {
    const used = (kind: Kind): number => {
      const b = this.#buckets.get(kind);
      return b ? Math.max(0, Math.round(b.capacity - b.level(now))) : 0;
    };
    return {
      limits: {
        rpm: this.#buckets.get('requests')?.perMinute,
        itpm: this.#buckets.get('input-tokens')?.perMinute,
        otpm: this.#buckets.get('output-tokens')?.perMinute,
      },
      used: { rpm: used('requests'), itpm: used('input-tokens'), otpm: used('output-tokens') },
      blockedMs: Math.max(0, this.#blockedUntil - now),
      rampCap: this.#rampCap(now),
      burstShare: this.#burstShare,
    };
  }
}
