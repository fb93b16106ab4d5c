import type { Clock } from '../../util/clock.ts';
import type { GatePermit, RequestGate } from '../../loop/types.ts';
import type { RequestCost, RequestReport } from '../../rate-limits/report.ts';
import { retryWaitMs } from './retry-wait.ts';
import type { AdmissionScheduler } from './scheduler.ts';
import type { SpendCap, SpendReservation } from './spend-cap.ts';

/** What the admission needs to know of a fan-out. */
interface AdmissionGateOptions {
  scheduler: AdmissionScheduler;
  /** The warm-first barrier and the concurrency limit, asked first. */
  inner: RequestGate;
  /** Whether a sibling's first request would read the shared prefix now (it is warm and marked). */
  prefixReadable: () => boolean;
  /** Whether the shared prefix can ever be read (it is written with a boundary marker): the spend cap's floor. */
  prefixCanBeRead?: boolean;
  /** Whether a fork's later turns read its own earlier turn (false when no marker is sent). */
  turnsRead: boolean;
  /** The model class the requests are counted in (the catalogue's family). */
  modelClass: string;
  /** Tokens per request byte, measured on the shared prefix. */
  tokensPerByte: () => number;
  clock: Clock;
  /** The client-side spend cap and how this fan-out's requests are priced for it (`maxUsd`). */
  spend?: SpendPricing | undefined;
  /** The shared prefix's tokens as the API counted them, once known (a first request's known part). */
  sharedTokens?: () => number | undefined;
  /** The frozen head's bytes: what a resumed fork's first request does not add (its `freshBytes` is the rest). */
  headBytes?: number;
}

/** The spend cap, and the fan-out's model priced for it, in nano-dollars. */
export interface SpendPricing {
  cap: SpendCap;
  /** The most a request of this many input tokens (an upper bound) and `max_tokens` can cost. */
  bound(inputTokens: number, maxTokens: number): number;
  /** What a completed request cost, from its usage. */
  price(usage: NonNullable<RequestReport['usage']>): number;
}

/** What the API adds to a request's tokens beyond its JSON (its tool-use system prompt, framing). */
const API_OVERHEAD_TOKENS = 1024;

/**
 * A bound on a request's input tokens, for the spend cap: what is known of it exactly — the
 * tokens of the fork's previous request as the API counted them, or for its first request the
 * shared prefix's count — plus one token for every byte it adds, plus the API's own additions.
 * A token is never shorter than a byte of the JSON it came from, so the bound holds however
 * densely the bytes tokenize (a hostile file of random characters counts 0.8 tokens a byte
 * where code counts 0.3: a bound from the prefix's ratio would undercount it). Nothing known:
 * a token per byte.
 */
export function inputTokensBound(cost: RequestCost, known: number | undefined): number {
  return known === undefined ? cost.bytes + API_OVERHEAD_TOKENS : known + cost.freshBytes + API_OVERHEAD_TOKENS;
}

/** What a fork's answered turns say about its next one (the spend cap's estimate). */
interface TurnHistory {
  /** Input tokens of its last answered request (all of them: uncached, written, read). */
  lastInput: number | undefined;
  /** The largest output of its turns. */
  maxOutput: number;
}

/**
 * The output a turn is assumed to write while no turn of the fan-out has answered yet: a
 * fork's turn is a tool call or a report, far below `max_tokens` (8,192 by default), and the
 * worst case would keep a small cap from admitting even the first request.
 */
const FIRST_OUTPUT_ESTIMATE = 1024;

/**
 * The spend cap's estimate of a request: what it will likely cost, from the fork's own history,
 * not the worst case of the whole model. Input: the fork's last request read back from the
 * cache (or the shared prefix, for its first), plus what it adds at a token a byte, written at
 * the cache-write price (what it adds is what a file it read holds: a token is never shorter
 * than a byte, so no densely tokenizing file can make it cost more than this). Output: twice the fork's largest
 * output so far, at least the largest of any turn of the fan-out, at most `max_tokens`.
 * Undefined while nothing is known (no turn answered, or the prefix is not readable yet for a
 * first request): then the worst case holds.
 */
function estimateNano(
  spend: SpendPricing,
  cost: RequestCost,
  o: {
    known: number | undefined;
    reads: boolean;
    ownMaxOutput: number;
    fanOutMaxOutput: number;
  },
): number | undefined {
  if (o.known === undefined || o.fanOutMaxOutput === 0) return undefined;
  const fresh = cost.freshBytes;
  const output = Math.min(cost.maxTokens, Math.max(2 * o.ownMaxOutput, o.fanOutMaxOutput));
  return spend.price({
    input_tokens: o.reads ? 0 : o.known,
    cache_read_input_tokens: o.reads ? o.known : 0,
    cache_creation_input_tokens: fresh,
    output_tokens: output,
  });
}

/** Counts of one fan-out's requests, for its summary. */
interface FanOutRateCounts {
  http429: number;
  http529: number;
  rampErrors: number;
  spendCap: number;
}

/**
 * A fan-out's view of the engine's admission: each fork gets its own gate (`forFork`) that
 * first passes the warm-first barrier, then reserves the request's predicted cost. The ITPM a
 * request counts is what the API will not read from the cache: the whole body for a warmer
 * (or any first request while the prefix is cold), only what this fork has not sent before
 * otherwise. With admission `off`, each fork waits out its own 429's `retry-after` before its
 * next attempt, as the SDK's per-call retries do (no global backoff).
 */
export class AdmissionGate {
  readonly #o: AdmissionGateOptions;
  readonly counts: FanOutRateCounts = { http429: 0, http529: 0, rampErrors: 0, spendCap: 0 };
  /** Forks with a request waiting for its permit. */
  readonly queuedForks = new Set<string>();
  /** The largest output of any answered turn of the fan-out (the spend cap's estimate). */
  #maxOutput = 0;
  /** Each fork's last request asked for: the one a stopped fork sends again when it goes on. */
  readonly #asked = new Map<string, RequestCost>();
  /** The largest first request of the fan-out: what a fork that never asked would send. */
  #largestFirst: RequestCost | undefined;

  constructor(options: AdmissionGateOptions) {
    this.#o = options;
  }

  forFork(forkId: string): RequestGate {
    let notBefore = Number.NEGATIVE_INFINITY;
    let failures = 0;
    // this fork's answered turns: the known part of its next request, its outputs
    const history: TurnHistory = { lastInput: undefined, maxOutput: 0 };
    return {
      acquire: async (request) => {
        const { scheduler, clock } = this.#o;
        if (request.cost) {
          this.#asked.set(forkId, request.cost);
          if (request.first && request.cost.bytes > (this.#largestFirst?.bytes ?? -1))
            this.#largestFirst = request.cost;
        }
        scheduler.waiting++;
        this.queuedForks.add(forkId);
        try {
          if (notBefore > clock.now()) {
            scheduler.sleepers.count++;
            await clock.sleep(notBefore - clock.now(), request.signal).finally(() => scheduler.sleepers.count--);
          }
          const permit = await this.#o.inner.acquire(request);
          let reservation;
          let hold: SpendReservation | undefined;
          try {
            hold = await this.#spend(request.first, request.cost, history, request.signal);
            reservation = await scheduler.reserve(
              this.#o.modelClass,
              this.#cost(request.first, request.cost),
              request.signal,
            );
          } catch (err) {
            hold?.settle(0);
            permit.release();
            throw err;
          }
          const r = reservation;
          return {
            started: (report?: RequestReport) => {
              hold?.started();
              r.started(report);
              permit.started(report);
            },
            release: (report?: RequestReport) => {
              this.#count(report);
              hold?.settle(report?.usage && this.#o.spend?.price(report.usage));
              const u = report?.usage;
              if (u) {
                history.lastInput = u.input_tokens + u.cache_creation_input_tokens + u.cache_read_input_tokens;
                history.maxOutput = Math.max(history.maxOutput, u.output_tokens);
                this.#maxOutput = Math.max(this.#maxOutput, u.output_tokens);
              }
              r.settle(report);
              if (scheduler.mode === 'off') {
                const limited = report?.status === 429 || report?.status === 529;
                failures = limited ? failures + 1 : 0;
                // this fork's own wait: retry-after within bounds, else the floor doubling (with jitter)
                if (limited)
                  notBefore =
                    clock.now() + retryWaitMs(report.retryAfterMs, failures, scheduler.retryAfter, scheduler.random);
              }
              permit.release(report);
            },
          } satisfies GatePermit;
        } finally {
          scheduler.waiting--;
          this.queuedForks.delete(forkId);
        }
      },
    };
  }

  /**
   * The spend cap's hold on this request (none without a cap): its estimate from the fork's
   * history (`estimateNano`), or the worst case while nothing is known.
   */
  #spend(
    first: boolean,
    cost: RequestCost | undefined,
    history: TurnHistory,
    signal: AbortSignal | undefined,
  ): Promise<SpendReservation | undefined> {
    const spend = this.#o.spend;
    if (!spend) return Promise.resolve(undefined);
    const known = first ? this.#o.sharedTokens?.() : history.lastInput;
    const reads = first ? this.#o.prefixReadable() : this.#o.turnsRead;
    return spend.cap.reserve(
      this.#holdNano(spend, first, cost, history, { known, reads, maxOutput: this.#maxOutput }),
      signal,
    );
  }

  /** What the cap holds for a request, in nano-dollars, from what is known when it asks. */
  #holdNano(
    spend: SpendPricing,
    first: boolean,
    cost: RequestCost | undefined,
    history: TurnHistory,
    now: { known: number | undefined; reads: boolean; maxOutput: number },
  ): number {
    const c = cost ?? { bytes: 0, freshBytes: 0, maxTokens: 0 };
    const estimate = estimateNano(spend, c, {
      known: first && !now.reads ? undefined : now.known,
      reads: now.reads,
      ownMaxOutput: history.maxOutput,
      fanOutMaxOutput: now.maxOutput,
    });
    // nothing answered yet: the input at its worst, the output at a turn's usual size
    return estimate ?? spend.bound(inputTokensBound(c, now.known), Math.min(c.maxTokens, FIRST_OUTPUT_ESTIMATE));
  }

  /**
   * The least the cap could ever hold for a fork's first request of this cost, in nano-dollars
   * (`#holdNano` at the most favourable state the fan-out can still reach): the shared prefix's
   * count is fixed once known, the fan-out's largest output only grows (at least one token once
   * a turn answers), and the prefix may yet become readable when `prefixCanBeRead` and
   * `warmable` (false: no request that could write it can be admitted any more, which only the
   * fan-out knows); the worst case holds where none of that applies; the lesser of the two.
   * Undefined without a cap or while the prefix's tokens are not counted (the hold could fall
   * further once they are).
   */
  firstFloorNano(cost: RequestCost, warmable = true): number | undefined {
    const spend = this.#o.spend;
    const known = this.#o.sharedTokens?.();
    const worst = this.firstWorstNano(cost);
    if (!spend || known === undefined || worst === undefined) return undefined;
    if (this.#o.prefixCanBeRead !== true || !warmable) return worst;
    const fresh: TurnHistory = { lastInput: undefined, maxOutput: 0 };
    const read = this.#holdNano(spend, true, cost, fresh, {
      known,
      reads: true,
      maxOutput: Math.max(1, this.#maxOutput),
    });
    return Math.min(worst, read);
  }

  /** What the cap holds for a first request of this cost while the shared prefix is not readable (its worst case). */
  firstWorstNano(cost: RequestCost): number | undefined {
    const spend = this.#o.spend;
    const known = this.#o.sharedTokens?.();
    if (!spend || known === undefined) return undefined;
    const fresh: TurnHistory = { lastInput: undefined, maxOutput: 0 };
    return this.#holdNano(spend, true, cost, fresh, { known, reads: false, maxOutput: 0 });
  }

  /** Whether a fork's first request would read the shared prefix now. */
  readsSharedNow(): boolean {
    return this.#o.prefixReadable();
  }

  /**
   * What the spend cap holds for this fork's next request when a later session sends it again
   * (`resume`), in nano-dollars: that session starts on a cache that may have expired and with
   * no answered turn, so the request is its session's first and is held at the worst case —
   * the shared prefix's tokens plus a token for every byte of the fork's own history, written,
   * plus a turn's usual output. Undefined without a cap.
   */
  restartBoundNano(forkId: string): number | undefined {
    const spend = this.#o.spend;
    if (!spend) return undefined;
    const head = this.#o.headBytes ?? 0;
    const asked = this.#asked.get(forkId) ?? this.#largestFirst ?? { bytes: head, freshBytes: 0, maxTokens: 0 };
    const cost = { bytes: asked.bytes, freshBytes: Math.max(0, asked.bytes - head), maxTokens: asked.maxTokens };
    const output = Math.min(asked.maxTokens || FIRST_OUTPUT_ESTIMATE, FIRST_OUTPUT_ESTIMATE);
    return spend.bound(inputTokensBound(cost, this.#o.sharedTokens?.()), output);
  }

  #cost(first: boolean, cost: RequestCost | undefined): { itpm: number; otpm: number } {
    if (!cost) return { itpm: 0, otpm: 0 };
    const reads = first ? this.#o.prefixReadable() : this.#o.turnsRead;
    const itpm = Math.ceil((reads ? cost.freshBytes : cost.bytes) * this.#o.tokensPerByte());
    return { itpm, otpm: this.#o.scheduler.outputEstimate(this.#o.modelClass, cost.maxTokens) };
  }

  /** The fan-out summary's `rate_limits`; `stopped`: some fork stopped at the spend cap. */
  summary(stopped: boolean): {
    admission: 'on' | 'off';
    http_429: number;
    http_529: number;
    ramp_limit_exceeded: number;
    spend_limit_reached: number;
    stopped: string | null;
  } {
    const c = this.counts;
    return {
      admission: this.#o.scheduler.mode,
      http_429: c.http429,
      http_529: c.http529,
      ramp_limit_exceeded: c.rampErrors,
      spend_limit_reached: c.spendCap,
      stopped: stopped ? 'enforced_spend_limit_reached' : null,
    };
  }

  /** A 429/529 met on a remote host (the distributed backend), from its `turn-retry` event. */
  countRemote(error: { data?: Record<string, unknown> | undefined }): void {
    const status = error.data?.['status'];
    if (status === 429 || status === 529) this.#count({ status });
  }

  #count(report: RequestReport | undefined): void {
    if (report?.status === 429) {
      this.counts.http429++;
      if (report.errorCode === 'ramp_limit_exceeded') this.counts.rampErrors++;
      if (report.errorCode === 'enforced_spend_limit_reached') this.counts.spendCap++;
    } else if (report?.status === 529) this.counts.http529++;
  }
}
