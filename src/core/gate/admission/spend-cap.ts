import { ForkcacheError } from '../../util/errors.ts';

/** A request's hold on the spend cap, from admission to its end. */
export interface SpendReservation {
  /** The response began: the request is billed, whatever happens next. */
  started(): void;
  /** The request ended; `costNano`: what it cost when its usage is known. Idempotent. */
  settle(costNano: number | undefined): void;
}

export interface SpendCapView {
  maxUsd: number;
  /** Counted so far: completed requests at their price, a billed request that failed at its bound. */
  spentUsd: number;
  /** Held by requests in flight (their bounds). */
  reservedUsd: number;
  /** Admission stopped: the next request could have passed the cap. */
  stopped: boolean;
}

interface Waiter {
  bound: number;
  grant(): void;
  reject(err: unknown): void;
}

const usd = (nano: number): number => nano / 1e9;

/**
 * The client-side spend cap (`--max-usd`, `maxUsd`): a request is admitted only while what was
 * spent plus every request in flight at its upper bound (src/core/ledger/spend-bound.ts) plus its own
 * bound stays within the cap. The bound is the caller's: the fan-out's gate passes an estimate
 * from the fork's own turns (src/core/gate/admission/admission-gate.ts), a pre-warm the worst case. A
 * request that does not fit waits for those in flight to settle (FIFO, no timer: each
 * settlement looks again); when nothing is in flight and it still does not fit, it never will
 * (spending only grows): it is refused with `SPEND_CAP_MAX_USD` and its fork stops after its
 * last complete turn (status `capped`), while a smaller turn behind it may still be admitted,
 * so the run spends what its cap allows. `resume` continues under a higher cap.
 *
 * A fork that has not started yet need not wait for its turn to be refused: `maxRoomNano` is
 * the most room any later request can find (what is left of the cap if everything in flight
 * settled at nothing; spending only grows), and `onSpend` says when it shrank. A fan-out ends
 * `capped` at once every queued fork whose first request could never be held below it
 * (src/core/engine/fan-out/queue-cap.ts).
 *
 * Amounts are integer nano-dollars. What "spent" counts: completed requests at the price of
 * their usage, a request that failed after its response began at its whole bound (its partial
 * usage is not known here; this can only overstate), earlier passes' turns (`addSpent`).
 */
export class SpendCap {
  readonly #cap: number;
  #spent = 0;
  #inFlight = 0;
  #stopped: { bound: number } | undefined;
  readonly #waiters: Waiter[] = [];
  readonly #onSpend = new Set<() => void>();

  constructor(maxUsd: number) {
    this.#cap = Math.floor(maxUsd * 1e9);
  }

  /** Turns done before this pass (a resumed run): the cap counts the whole run. */
  addSpent(nano: number): void {
    this.#spend(nano);
  }

  /**
   * The most room a request admitted from now on can ever find, in nano-dollars: the cap less
   * what was spent, as if every request in flight settled at nothing. It only shrinks.
   */
  maxRoomNano(): number {
    return this.#cap - this.#spent;
  }

  /** Call `listener` each time spending grows (`maxRoomNano` shrank). Returns the unsubscribe. */
  onSpend(listener: () => void): () => void {
    this.#onSpend.add(listener);
    return () => this.#onSpend.delete(listener);
  }

  #spend(nano: number): void {
    if (nano <= 0) return;
    this.#spent += nano;
    for (const listener of [...this.#onSpend]) listener();
  }

  view(): SpendCapView {
    return {
      maxUsd: usd(this.#cap),
      spentUsd: usd(this.#spent),
      reservedUsd: usd(this.#inFlight),
      stopped: this.#stopped !== undefined,
    };
  }

  /** Hold `bound` (nano-dollars) until the request settles; waits or refuses as the class says. */
  reserve(bound: number, signal?: AbortSignal): Promise<SpendReservation> {
    // spending only grows: a bound that did not fit with nothing in flight never will
    if (this.#stopped && this.#inFlight === 0 && !this.#fits(bound)) return Promise.reject(this.refusal(bound));
    return new Promise<SpendReservation>((resolve, reject) => {
      const onAbort = (): void => {
        const i = this.#waiters.indexOf(waiter);
        if (i >= 0) this.#waiters.splice(i, 1);
        reject(signal!.reason);
        this.#pump();
      };
      const waiter: Waiter = {
        bound,
        grant: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve(this.#hold(bound));
        },
        reject: (err) => {
          signal?.removeEventListener('abort', onAbort);
          reject(err);
        },
      };
      if (signal?.aborted) return reject(signal.reason);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiters.push(waiter);
      this.#pump();
    });
  }

  #fits(bound: number): boolean {
    return this.#spent + this.#inFlight + bound <= this.#cap;
  }

  #pump(): void {
    while (this.#waiters.length > 0) {
      const head = this.#waiters[0]!;
      if (this.#fits(head.bound)) {
        this.#waiters.shift();
        this.#inFlight += head.bound;
        head.grant();
        continue;
      }
      // what is in flight may settle below its bound and make room
      if (this.#inFlight > 0) return;
      // with nothing in flight it never will: that fork stops, and a smaller turn behind it may still fit
      this.#stopped ??= { bound: head.bound };
      this.#waiters.shift();
      head.reject(this.refusal(head.bound));
    }
  }

  #hold(bound: number): SpendReservation {
    let began = false;
    let settled = false;
    return {
      started: () => {
        began = true;
      },
      settle: (costNano) => {
        if (settled) return;
        settled = true;
        this.#inFlight -= bound;
        this.#spend(costNano ?? (began ? bound : 0));
        this.#pump();
      },
    };
  }

  /**
   * The error of a request of this bound (nano-dollars) the cap will not admit: its fork ends
   * `capped`. `floor`: the bound is the least a queued fork's first request could be held at
   * (src/core/engine/fan-out/queue-cap.ts), not the hold of a request that was about to be sent.
   */
  refusal(bound: number, floor = false): ForkcacheError {
    const v = this.view();
    const next = floor
      ? `its first turn would hold at least $${usd(bound).toFixed(4)}`
      : `the next turn could cost up to $${usd(bound).toFixed(4)}`;
    return new ForkcacheError(
      'SPEND_CAP_MAX_USD',
      `the run's spend cap of $${v.maxUsd} was reached: $${v.spentUsd.toFixed(4)} spent, and ${next}; no more turns are admitted (resume with a higher --max-usd)`,
      { data: { maxUsd: v.maxUsd, spentUsd: v.spentUsd, nextBoundUsd: usd(bound) } },
    );
  }
}
