import type { Clock } from '../../util/clock.ts';
import { ForkcacheError } from '../../util/errors.ts';
import { SPEND_LIMIT_REACHED } from '../../rate-limits/headers.ts';
import type { RequestReport } from '../../rate-limits/report.ts';
import { DEFAULT_RETRY_AFTER, type RetryAfterPolicy } from './retry-wait.ts';
import { type BudgetSnapshot, ClassBudget, type Cost } from './class-budget.ts';

export type AdmissionMode = 'on' | 'off';

/** A reserved slice of the budget, held from admission to the request's end. */
export interface Reservation {
  readonly cost: Cost;
  /** The response began: learn from its headers. */
  started(report: RequestReport | undefined): void;
  /** The request ended: settle from its usage or react to its error. Idempotent. */
  settle(report: RequestReport | undefined): void;
}

/** One model class's budget and queue, as the board and the report show it. */
export interface ClassView extends BudgetSnapshot {
  modelClass: string;
  queued: number;
  inFlight: number;
}

export interface AdmissionView {
  mode: AdmissionMode;
  /** Permit requests not granted yet, whatever holds them (warm-first, concurrency, budget, backoff). */
  waiting: number;
  /** Of those, how many sleep on the clock (a budget wait or a backoff): lets a driver of emulated time know the engine is parked. */
  sleepers: number;
  classes: ClassView[];
  stopped: { errorCode: string; modelClass: string } | undefined;
}

interface Waiter {
  cost: Cost;
  resolve(reservation: Reservation): void;
  reject(err: unknown): void;
}

/** The spend cap's error: the run stops admitting; running forks finish their turn and checkpoint. */
export function spendCapError(modelClass: string): ForkcacheError {
  return new ForkcacheError(
    'RATE_LIMIT_SPEND_CAP',
    `the API's spend limit was reached (${SPEND_LIMIT_REACHED}, model class ${modelClass}): no more requests are admitted; resume the run once the limit is lifted`,
    {
      data: { errorCode: SPEND_LIMIT_REACHED, modelClass },
    },
  );
}

/** One class: its budget, a FIFO queue (a large request is not starved by small ones) and one pump. */
class ClassQueue {
  readonly budget: ClassBudget;
  readonly #waiters: Waiter[] = [];
  readonly #clock: Clock;
  readonly #name: string;
  readonly #onChange: () => void;
  readonly #sleepers: { count: number };
  #pumping = false;
  #wake: AbortController | undefined;
  inFlight = 0;

  constructor(name: string, clock: Clock, onChange: () => void, sleepers: { count: number }, budget: ClassBudget) {
    this.budget = budget;
    this.#sleepers = sleepers;
    this.#name = name;
    this.#clock = clock;
    this.#onChange = onChange;
  }

  get queued(): number {
    return this.#waiters.length;
  }

  enqueue(cost: Cost, signal: AbortSignal | undefined): Promise<Reservation> {
    if (this.budget.stopped) return Promise.reject(spendCapError(this.#name));
    return new Promise<Reservation>((resolve, reject) => {
      const waiter: Waiter = {
        cost,
        resolve: (r) => (signal?.removeEventListener('abort', onAbort), resolve(r)),
        reject: (e) => (signal?.removeEventListener('abort', onAbort), reject(e)),
      };
      const onAbort = (): void => {
        const i = this.#waiters.indexOf(waiter);
        if (i >= 0) this.#waiters.splice(i, 1);
        reject(signal!.reason);
        this.poke();
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiters.push(waiter);
      if (!this.#pumping) void this.#pump();
    });
  }

  /** Something changed (a refund, a cancelled head): look at the queue again now. */
  poke(): void {
    this.#wake?.abort();
  }

  async #pump(): Promise<void> {
    this.#pumping = true;
    try {
      while (this.#waiters.length > 0) {
        if (this.budget.stopped) {
          for (const w of this.#waiters.splice(0)) w.reject(spendCapError(this.#name));
          break;
        }
        const head = this.#waiters[0]!;
        const now = this.#clock.now();
        const wait = this.budget.waitMs(head.cost, now);
        if (wait <= 0) {
          this.#waiters.shift();
          this.budget.take(head.cost, now);
          head.resolve(this.#reservation(head.cost, now));
          continue;
        }
        this.#wake = new AbortController();
        this.#sleepers.count++;
        await this.#clock.sleep(wait, this.#wake.signal).catch(() => undefined);
        this.#sleepers.count--;
        this.#wake = undefined;
      }
    } finally {
      this.#pumping = false;
    }
  }

  #reservation(cost: Cost, sentAt: number): Reservation {
    this.inFlight++;
    this.#onChange();
    let settled = false;
    return {
      cost,
      started: (report) => {
        this.budget.learn(report?.rateLimits, sentAt, this.#clock.now());
        this.poke();
      },
      settle: (report) => {
        if (settled) return;
        settled = true;
        this.inFlight--;
        this.budget.settle(cost, report, sentAt, this.#clock.now());
        this.#onChange();
        this.poke();
      },
    };
  }
}

/**
 * The engine's rate-limit admission, shared by every fan-out and every worker thread (they
 * ask the main thread for each request's permit): before a request is sent, its predicted
 * ITPM, one request and an OTPM estimate are reserved from its model class's buckets; a 429
 * or 529 holds every request of the class for one backoff; the spend cap stops admission.
 * `off`: nothing is held (the comparison arms), only counted.
 */
export class AdmissionScheduler {
  readonly mode: AdmissionMode;
  readonly #clock: Clock;
  readonly #classes = new Map<string, ClassQueue>();
  readonly #listeners = new Set<(view: AdmissionView) => void>();
  waiting = 0;
  /** Waits on the clock in progress (shared with the fan-out gates' per-fork backoffs). */
  readonly sleepers = { count: 0 };

  /** The backoff after a 429/529 (`retry-after` bounded, with jitter; see rate-limits/retry-after.ts). */
  readonly retryAfter: RetryAfterPolicy;
  /** Jitter's source (tests pass a fixed one). */
  readonly random: () => number;

  constructor(options: { clock: Clock; mode: AdmissionMode; retryAfter?: RetryAfterPolicy; random?: () => number }) {
    this.mode = options.mode;
    this.#clock = options.clock;
    this.retryAfter = options.retryAfter ?? DEFAULT_RETRY_AFTER;
    this.random = options.random ?? Math.random;
  }

  #queue(modelClass: string): ClassQueue {
    let queue = this.#classes.get(modelClass);
    if (!queue)
      this.#classes.set(
        modelClass,
        (queue = new ClassQueue(
          modelClass,
          this.#clock,
          () => this.#changed(),
          this.sleepers,
          new ClassBudget(this.retryAfter, this.random),
        )),
      );
    return queue;
  }

  outputEstimate(modelClass: string, maxTokens: number): number {
    return this.#queue(modelClass).budget.outputEstimate(maxTokens);
  }

  /** Wait until `cost` fits the class's budget (at once when the mode is `off`). */
  reserve(modelClass: string, cost: Cost, signal?: AbortSignal): Promise<Reservation> {
    const queue = this.#queue(modelClass);
    if (this.mode === 'off') {
      queue.inFlight++;
      let settled = false;
      const now = this.#clock.now();
      return Promise.resolve({
        cost,
        started: () => undefined,
        settle: (report) => {
          if (settled) return;
          settled = true;
          queue.inFlight--;
          // counted and learned (the board shows them), never waited on
          queue.budget.learn(report?.rateLimits, now, this.#clock.now());
          if (report?.status === 429) queue.budget.counters.http429++;
          if (report?.status === 529) queue.budget.counters.http529++;
        },
      });
    }
    return queue.enqueue(cost, signal);
  }

  /** Called on every admission and settlement (the fan-out samples the budget for its report). */
  onChange(listener: (view: AdmissionView) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #changed(): void {
    if (this.#listeners.size === 0) return;
    const view = this.view();
    for (const listener of this.#listeners) listener(view);
  }

  view(): AdmissionView {
    const now = this.#clock.now();
    let stopped: AdmissionView['stopped'];
    const classes = [...this.#classes].map(([modelClass, q]) => {
      if (q.budget.stopped && !stopped) stopped = { errorCode: q.budget.stopped.errorCode, modelClass };
      return { modelClass, queued: q.queued, inFlight: q.inFlight, ...q.budget.snapshot(now) };
    });
    return { mode: this.mode, waiting: this.waiting, sleepers: this.sleepers.count, classes, stopped };
  }

  /**
   * A new fan-out (or a resume) tries again after a spend-cap stop: the cap may have been
   * lifted. Its first request answers; if the cap still holds, admission stops again.
   */
  retryAfterStop(): void {
    for (const q of this.#classes.values()) q.budget.stopped = undefined;
  }

  counters(modelClass: string): ClassBudget['counters'] {
    return this.#queue(modelClass).budget.counters;
  }
}
