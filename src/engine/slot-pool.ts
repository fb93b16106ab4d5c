import type { GatePermit, RequestGate } from '../loop/types.ts';

/**
 * How the slots get the prefix: `auto` (prefill once, then the KV cache copied into every slot
 * where the server keeps idle slots and allows copies; one slot for every fork where it clears
 * them), `copy` (prefill once and copy, even on a server that clears idle slots: there before
 * each fork's request), `warm-each` (one prefill per slot: what `auto` falls back to without
 * copies, here on purpose).
 */
export type SlotFill = 'auto' | 'copy' | 'warm-each';
export const SLOT_FILLS: readonly SlotFill[] = ['auto', 'copy', 'warm-each'];

/**
 * The slots of a llama-server that one fan-out uses: each fork holds one slot for all its turns
 * (its requests carry `id_slot`), at most one fork per slot at a time, the rest wait in order.
 *
 * Some servers clear an idle slot whenever a task starts on another one (llama-server's default
 * without `-np`: one unified KV cache, idle slots moved to its host-memory prompt cache, which a
 * request pinned to a slot never reads back). There `restore` puts the shared prefix back into a
 * slot just before a request on it, and a lock keeps any other request from starting between
 * that restore and the server taking the request (the permit's `started`: its first chunk).
 */
export class SlotPool {
  readonly size: number;
  readonly #free: number[];
  readonly #waiting: ((slot: number) => void)[] = [];
  readonly #restore: ((slot: number) => Promise<void>) | undefined;
  /** Slots that may have lost the prefix since it was put there (clearing servers only). */
  readonly #dirty: boolean[];
  readonly #inFlight: boolean[];
  /** Requests started so far, and how many had started when each slot's own one did. */
  #launches = 0;
  readonly #launchesAtStart: number[];
  #lock: Promise<void> = Promise.resolve();
  /** Restores done before a request (the figures say how often the prefix was copied in). */
  restores = 0;

  /**
   * `clean`: the slots that hold the prefix now. `restore`: set for a server that clears idle
   * slots (copies the prefix back in before a request on a slot that may have lost it).
   */
  constructor(size: number, options: { clean: readonly number[]; restore?: (slot: number) => Promise<void> }) {
    this.size = size;
    this.#free = Array.from({ length: size }, (_, i) => i);
    this.#restore = options.restore;
    this.#dirty = this.#free.map((i) => !options.clean.includes(i));
    this.#inFlight = this.#free.map(() => false);
    this.#launchesAtStart = this.#free.map(() => 0);
  }

  /** A free slot (the lowest first), or wait in order for one. */
  acquire(signal?: AbortSignal): Promise<number> {
    signal?.throwIfAborted();
    const slot = this.#free.shift();
    if (slot !== undefined) return Promise.resolve(slot);
    return new Promise<number>((resolve, reject) => {
      const wake = (s: number): void => {
        signal?.removeEventListener('abort', onAbort);
        resolve(s);
      };
      const onAbort = (): void => {
        const at = this.#waiting.indexOf(wake);
        if (at >= 0) this.#waiting.splice(at, 1);
        reject(signal!.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiting.push(wake);
    });
  }

  release(slot: number): void {
    const next = this.#waiting.shift();
    if (next) next(slot);
    else {
      this.#free.push(slot);
      this.#free.sort((a, b) => a - b);
    }
  }

  /** The gate of a fork pinned to `slot`: on a clearing server, restore-then-start under the lock. */
  gate(slot: number, inner: RequestGate): RequestGate {
    const restore = this.#restore;
    if (!restore) return inner;
    return {
      acquire: async (request) => {
        const permit = await inner.acquire(request);
        let unlock!: () => void;
        const previous = this.#lock;
        this.#lock = new Promise<void>((resolve) => (unlock = resolve));
        await previous;
        let held = true;
        const free = (): void => {
          if (held) unlock();
          held = false;
        };
        try {
          if (this.#dirty[slot]) {
            await restore(slot);
            this.restores += 1;
          }
        } catch {
          // a failed restore costs a recomputed prefix, which the ledger shows; the fork goes on
        }
        this.#dirty[slot] = false;
        // the server clears every idle slot as this request starts
        for (let i = 0; i < this.size; i++) if (i !== slot && !this.#inFlight[i]) this.#dirty[i] = true;
        this.#inFlight[slot] = true;
        this.#launches += 1;
        this.#launchesAtStart[slot] = this.#launches;
        return {
          started: (report) => {
            permit.started(report);
            free();
          },
          release: (report) => {
            this.#inFlight[slot] = false;
            // the server went idle on this slot as its response ended, a little before this: a
            // request started meanwhile may have cleared it. Unsure, restore (a prefix copy costs
            // milliseconds; a cleared slot read as full costs the whole prefix)
            if (this.#launches > this.#launchesAtStart[slot]!) this.#dirty[slot] = true;
            free();
            permit.release(report);
          },
        } satisfies GatePermit;
      },
    };
  }
}
