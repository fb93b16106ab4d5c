import type { Clock } from '../../core/util/clock.ts';
import type { GatePermit, RequestGate } from '../../core/loop/types.ts';
import type { RequestReport } from '../../core/rate-limits/report.ts';
import type { SlotActionResult } from './server-api.ts';
import type { SlotFiles } from './slot-files.ts';
import type { SwitchFigures } from '../../core/ledger/engine-figures.ts';
import type { EngineTimings } from '../../core/ledger/usage.ts';

/** The server's slot actions the pool needs (LlamaServerApi). */
export interface SlotActions {
  save(slot: number, file: string, signal?: AbortSignal): Promise<SlotActionResult>;
  restore(slot: number, file: string, signal?: AbortSignal): Promise<SlotActionResult>;
}

const PREFIX = '\u0000prefix';

interface SlotState {
  /** Whose KV cache is in the slot: a fork id, the prefix copy, or nothing known. */
  holder: string | null;
  busy: boolean;
  usedAt: number;
  takenAt: number;
  /** In-flight requests × ms while this slot's request held it (its average concurrency × its time). */
  area: number;
  /** Requests started when this slot's own did (clearing servers: one after it may have cleared it). */
  launchesAtStart: number;
  /** A request started elsewhere as this slot's response ended: the server may have cleared it. */
  uncertain: boolean;
}

interface ForkState {
  requests: number;
  ended: boolean;
  /** Prompt tokens of its last request (what a save of its slot must hold at least). */
  lastPrompt: number;
  /** Its own part of the last request (what follows the prefix): what a recompute costs. */
  lastOwn: number;
  idleSince: number | undefined;
}

interface Waiter {
  forkId: string;
  resolve(slot: number): void;
}

/** One request as the policy learns from it (src/providers/llama-cpp/slot-policy.ts). */
export interface RequestSample {
  /** The fork's first request: every fork's first has the same shape (the rules, a directive, max tokens). */
  first: boolean;
  /** Time the request held its slot (a restore, the request, its response). */
  heldMs: number;
  /** Requests in flight while it held it, on average (1: it ran alone). */
  concurrency: number;
  /** The server's prompt and generation time for it (llama.cpp's `timings`), when reported. */
  serverMs: number | undefined;
  /** Tokens it computed and generated. */
  tokens: number;
}

/** What the pool tells the policy as the forks run: it may change `limit` and `switching`. */
export interface PoolObserver {
  /** A request ended (no sample: it failed before the server's usage). */
  request(pool: SlotPool, forkId: string, sample: RequestSample | undefined): void;
  /** A fork's time between two of its requests, or after its last one until it ended (tools, its check). */
  gap(pool: SlotPool, forkId: string, ms: number): void;
  /** The fork ended (after the gap of its check, if it had one). */
  ended(pool: SlotPool, forkId: string): void;
}

/**
 * The slots of a llama-server that one fan-out uses. A fork holds a slot for **one request**
 * (the permit names it; the worker writes it into the request as `id_slot`), never between its
 * turns: its tools and its check run while other forks' requests use the slot.
 *
 * When a different fork takes a slot, the slot's KV cache is saved to the previous fork's file
 * first (only then: someone else is waiting for it), and before a fork's later turn its own file
 * is restored if the slot has served another fork since (`/slots/{id}?action=save|restore`). A
 * fork back on the slot that still holds it restores nothing. Where the files are not allowed,
 * or switching costs more than it saves (the policy, slot-policy.ts), a fork's later turn reads
 * the prefix from the slot and computes its own turns again (counted in `recomputed`).
 *
 * Some servers clear an idle slot whenever a task starts on another one (llama-server's default
 * without `-np`: one unified KV cache, idle slots moved to host memory, which a pinned request
 * never reads back). With more than one slot there, a lock keeps any other request from
 * starting between a restore and the server taking the request (the permit's `started`), and a
 * save that finds its slot cleared (fewer tokens than the fork's prompt) is not kept.
 */
export class SlotPool {
  readonly size: number;
  readonly clears: boolean;
  readonly #slots: SlotState[];
  readonly #forks = new Map<string, ForkState>();
  readonly #waiting: Waiter[] = [];
  readonly #actions: SlotActions | undefined;
  readonly #files: SlotFiles | undefined;
  readonly #prefixFile: string | undefined;
  readonly #clock: Clock;
  readonly #log: (record: Record<string, unknown>) => void;
  readonly #sharedTokens: () => number | undefined;
  #lock: Promise<void> = Promise.resolve();
  /** Saves under way, by fork: its next turn on another slot waits for its file. */
  readonly #saving = new Map<string, Promise<void>>();
  #tick = 0;
  #inFlight = 0;
  /** When the in-flight count last changed: each busy slot's concurrency is integrated from it. */
  #inFlightSince = 0;
  /** Most requests the pool lets run at once (the policy's choice; at most `size`). */
  #limit: number;
  #launches = 0;
  /** Most requests in flight at once (what `-np N` lets run side by side). */
  peakInFlight = 0;
  /** Prompt processing the server reported for these requests, and the tokens it computed. */
  promptMs = 0;
  promptTokens = 0;
  /** Switching on: a fork's state is saved and restored around other forks' requests. */
  switching: boolean;
  readonly figures: Omit<SwitchFigures, 'on' | 'peak_requests' | 'files_left'> = {
    saves: 0,
    restores: 0,
    prefix_restores: 0,
    recomputed: 0,
    save_ms: 0,
    restore_ms: 0,
    peak_bytes: 0,
    evictions: 0,
    outside_ms: 0,
    inside_ms: 0,
  };
  /** Why the policy turned switching off, once it did. */
  stopped: string | undefined;
  /** Called after each switch with what it cost: the policy may turn switching off. */
  onSwitch: ((pool: SlotPool) => void) | undefined;
  /** The policy learning from the forks' requests and the time between them. */
  observer: PoolObserver | undefined;

  constructor(options: {
    size: number;
    /** Slots that hold the prefix now. */
    clean: readonly number[];
    clears: boolean;
    clock: Clock;
    actions?: SlotActions | undefined;
    /** The fork files: switching needs them. */
    files?: SlotFiles | undefined;
    /** The prefix (and fork rules) as saved after the warm-up: restored into a slot that lost them. */
    prefixFile?: string | undefined;
    log?: (record: Record<string, unknown>) => void;
    /** The shared prefix's tokens, once measured (a fork's own part is what follows it). */
    sharedTokens?: () => number | undefined;
  }) {
    this.size = options.size;
    this.clears = options.clears;
    this.#slots = Array.from({ length: options.size }, (_, i) => ({
      holder: options.clean.includes(i) ? PREFIX : null,
      busy: false,
      usedAt: 0,
      takenAt: 0,
      area: 0,
      launchesAtStart: 0,
      uncertain: false,
    }));
    this.#actions = options.actions;
    this.#files = options.files;
    this.#prefixFile = options.prefixFile;
    this.#clock = options.clock;
    this.#log = options.log ?? (() => {});
    this.#sharedTokens = options.sharedTokens ?? (() => undefined);
    this.switching = options.files !== undefined && options.actions !== undefined;
    this.#limit = options.size;
  }

  /** Most requests in flight at once now. */
  get limit(): number {
    return this.#limit;
  }

  /** How many requests may run at once (the policy's choice): more wakes forks waiting for a slot. */
  setLimit(limit: number): void {
    this.#limit = Math.max(1, Math.min(this.size, Math.round(limit)));
    while (this.#waiting.length > 0 && this.#inFlight < this.#limit) {
      const [next] = this.#waiting;
      const slot = this.#pick(next!.forkId);
      if (slot === undefined) return;
      this.#waiting.shift();
      next!.resolve(this.#take(slot));
    }
  }

  /** The gate of a fork's requests: each waits for a slot, which its permit names. */
  gate(forkId: string, inner: RequestGate): RequestGate {
    return {
      acquire: async (request) => {
        const permit = await inner.acquire(request);
        let slot: number;
        try {
          slot = await this.#acquire(forkId, request.signal);
        } catch (err) {
          permit.release();
          throw err;
        }
        let unlock: () => void;
        try {
          unlock = await this.#prepare(slot, forkId, request.signal);
        } catch (err) {
          this.#free(slot, forkId, undefined);
          permit.release();
          throw err;
        }
        let released = false;
        return {
          slot,
          started: (report) => {
            unlock();
            permit.started(report);
          },
          release: (report) => {
            if (released) return;
            released = true;
            unlock();
            this.#free(slot, forkId, report);
            permit.release(report);
          },
        } satisfies GatePermit;
      },
    };
  }

  /** The fork ended: its file is of no more use, and its slot's state need not be saved. */
  forkEnded(forkId: string): void {
    const fork = this.#fork(forkId);
    // its check after its last turn: time it did not need the model, like its tools
    if (!fork.ended && fork.idleSince !== undefined) {
      const ms = this.#clock.now() - fork.idleSince;
      this.figures.outside_ms += ms;
      this.observer?.gap(this, forkId, ms);
    }
    fork.idleSince = undefined;
    if (!fork.ended) this.observer?.ended(this, forkId);
    fork.ended = true;
    this.#files?.drop(forkId);
  }

  #fork(forkId: string): ForkState {
    let fork = this.#forks.get(forkId);
    if (!fork) {
      fork = { requests: 0, ended: false, lastPrompt: 0, lastOwn: 0, idleSince: undefined };
      this.#forks.set(forkId, fork);
    }
    return fork;
  }

  /** A free slot, the one that still holds this fork first; or wait in order for one. */
  #acquire(forkId: string, signal: AbortSignal | undefined): Promise<number> {
    signal?.throwIfAborted();
    const fork = this.#fork(forkId);
    if (fork.idleSince !== undefined) {
      const ms = this.#clock.now() - fork.idleSince;
      this.figures.outside_ms += ms;
      fork.idleSince = undefined;
      this.observer?.gap(this, forkId, ms);
    }
    const slot = this.#pick(forkId);
    if (slot !== undefined) return Promise.resolve(this.#take(slot));
    return new Promise<number>((resolve, reject) => {
      const waiter: Waiter = {
        forkId,
        resolve: (s) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(s);
        },
      };
      const onAbort = (): void => {
        const at = this.#waiting.indexOf(waiter);
        if (at >= 0) this.#waiting.splice(at, 1);
        reject(signal!.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiting.push(waiter);
    });
  }

  /** Which free slot: its own, else one whose state nobody needs, else the least recently used. */
  #pick(forkId: string): number | undefined {
    if (this.#inFlight >= this.#limit) return undefined;
    const free = this.#slots.map((s, i) => ({ s, i })).filter(({ s }) => !s.busy);
    if (free.length === 0) return undefined;
    const own = free.find(({ s }) => s.holder === forkId);
    if (own) return own.i;
    const unneeded = free.filter(({ s }) => !this.#needed(s.holder));
    const pool = unneeded.length > 0 ? unneeded : free;
    return pool.sort((a, b) => a.s.usedAt - b.s.usedAt)[0]!.i;
  }

  #needed(holder: string | null): boolean {
    if (holder === null || holder === PREFIX) return false;
    return !this.#fork(holder).ended;
  }

  /** Integrate the in-flight count into every busy slot's area up to now. */
  #integrate(): void {
    const now = this.#clock.now();
    const dt = now - this.#inFlightSince;
    if (dt > 0) for (const s of this.#slots) if (s.busy) s.area += dt * this.#inFlight;
    this.#inFlightSince = now;
  }

  #take(slot: number): number {
    const s = this.#slots[slot]!;
    this.#integrate();
    s.busy = true;
    s.usedAt = ++this.#tick;
    s.takenAt = this.#clock.now();
    s.area = 0;
    this.#inFlight += 1;
    this.peakInFlight = Math.max(this.peakInFlight, this.#inFlight);
    return slot;
  }

  #free(slot: number, forkId: string, report: RequestReport | undefined): void {
    const s = this.#slots[slot]!;
    this.#integrate();
    s.busy = false;
    this.#inFlight -= 1;
    // the server went idle on this slot as its response ended, a little before this: a request
    // started meanwhile may have cleared it. Unsure, a copy is restored (milliseconds) rather
    // than the slot read as full (a whole prefix recomputed)
    if (this.clears && this.#launches > s.launchesAtStart) s.uncertain = true;
    const fork = this.#fork(forkId);
    fork.idleSince = this.#clock.now();
    const heldMs = fork.idleSince - s.takenAt;
    this.figures.inside_ms += heldMs;
    const usage = report?.usage;
    const timings = (usage as { timings?: EngineTimings } | undefined)?.timings;
    if (usage && timings && usage.input_tokens > 0) {
      this.promptMs += timings.prompt_ms;
      this.promptTokens += usage.input_tokens;
    }
    if (usage) {
      fork.requests += 1;
      const prompt = usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens;
      fork.lastOwn = Math.max(0, prompt - (this.#sharedTokens() ?? 0));
      fork.lastPrompt = prompt;
      this.observer?.request(this, forkId, {
        first: fork.requests === 1,
        heldMs,
        concurrency: heldMs > 0 ? s.area / heldMs : 1,
        serverMs: timings ? timings.prompt_ms + timings.predicted_ms : undefined,
        tokens: usage.input_tokens + usage.output_tokens,
      });
    } else {
      if (s.holder === forkId) s.holder = null; // failed midway: what the slot holds is unknown
      this.observer?.request(this, forkId, undefined);
    }
    // the policy may have lowered the limit: the slot stays free
    if (this.#waiting.length === 0 || this.#inFlight >= this.#limit) return;
    // the fork that still has its state here goes first; otherwise the first in line. Either
    // takes the slot `#pick` gives it, not necessarily this one: with fewer requests at once
    // than slots (the policy chose one), the first in line may have its state in another free
    // slot, which nobody took (so nobody saved it): handed this one, it would compute its own
    // turns again
    const mine = this.#waiting.findIndex((w) => w.forkId === s.holder);
    const [next] = this.#waiting.splice(mine >= 0 ? mine : 0, 1);
    next!.resolve(this.#take(this.#pick(next!.forkId)!));
    // the policy may have raised it: more forks go
    this.setLimit(this.#limit);
  }

  /**
   * Make the slot ready for the fork's request: save the previous fork's state when it will be
   * wanted again, then restore this fork's own (or the prefix copy where the slot lost it).
   * Returns the unlock of the start lock (held until the request started, clearing servers).
   */
  async #prepare(slot: number, forkId: string, signal: AbortSignal | undefined): Promise<() => void> {
    let unlock = (): void => {};
    if (this.clears && this.size > 1) {
      const previous = this.#lock;
      let open!: () => void;
      this.#lock = new Promise<void>((resolve) => (open = resolve));
      await previous;
      let held = true;
      unlock = () => {
        if (held) open();
        held = false;
      };
    }
    const s = this.#slots[slot]!;
    const fork = this.#fork(forkId);
    try {
      if (s.holder !== forkId || s.uncertain) {
        // the file about to be restored is the most recently used: the bound drops another first
        this.#files?.get(forkId);
        const previous = s.holder;
        if (
          previous !== null &&
          previous !== PREFIX &&
          previous !== forkId &&
          this.#needed(previous) &&
          this.switching
        ) {
          const saving = this.#save(slot, previous, signal);
          this.#saving.set(previous, saving);
          await saving.finally(() => this.#saving.delete(previous));
        }
        if (fork.requests > 0) await this.#restoreOwn(slot, forkId, signal);
        else if ((s.holder === null || s.uncertain) && this.#prefixFile) await this.#restorePrefix(slot, signal);
      }
    } catch (err) {
      unlock();
      throw err;
    }
    // the server clears every idle slot as this request starts
    if (this.clears) for (const other of this.#slots) if (other !== s && !other.busy) other.holder = null;
    s.holder = forkId;
    s.uncertain = false;
    this.#launches += 1;
    s.launchesAtStart = this.#launches;
    return unlock;
  }

  async #save(slot: number, forkId: string, signal: AbortSignal | undefined): Promise<void> {
    const files = this.#files!;
    const fork = this.#fork(forkId);
    const name = files.nameFor(forkId);
    const at = this.#clock.now();
    const done = await this.#actions!.save(slot, name, signal).catch((err: unknown) => {
      if (signal?.aborted) throw err;
      return { ok: false, status: 0, message: (err as Error).message } as const;
    });
    const ms = this.#clock.now() - at;
    // a slot cleared before the save (a task started elsewhere first) holds less than the prompt
    if (!done.ok || done.tokens < fork.lastPrompt) {
      files.drop(forkId);
      this.#log({
        type: 'slot-save-failed',
        at: this.#clock.now(),
        slot,
        forkId,
        ...(done.ok ? { tokens: done.tokens } : { error: done.message }),
      });
      return;
    }
    this.figures.saves += 1;
    this.figures.save_ms += ms;
    const dropped = files.saved(forkId, name, done.tokens, done.bytes);
    // the fork ended while its state was being saved: nobody will restore it
    if (fork.ended) files.drop(forkId);
    this.figures.peak_bytes = Math.max(this.figures.peak_bytes, files.totalBytes);
    this.figures.evictions = files.evictions;
    this.#log({
      type: 'slot-save',
      at: this.#clock.now(),
      slot,
      forkId,
      tokens: done.tokens,
      bytes: done.bytes,
      ms,
      ...(dropped.length > 0 ? { dropped } : {}),
    });
  }

  async #restoreOwn(slot: number, forkId: string, signal: AbortSignal | undefined): Promise<void> {
    // its state is being saved from the slot it left (another fork took it a moment ago)
    await this.#saving.get(forkId)?.catch(() => undefined);
    const file = this.switching ? this.#files?.get(forkId) : undefined;
    if (file) {
      const at = this.#clock.now();
      const done = await this.#actions!.restore(slot, file.name, signal).catch((err: unknown) => {
        if (signal?.aborted) throw err;
        return { ok: false, status: 0, message: (err as Error).message } as const;
      });
      const ms = this.#clock.now() - at;
      this.#log({
        type: 'slot-restore',
        at: this.#clock.now(),
        slot,
        forkId,
        ok: done.ok,
        ms,
        ...(done.ok ? { tokens: done.tokens } : { error: done.message }),
      });
      if (done.ok) {
        this.figures.restores += 1;
        this.figures.restore_ms += ms;
        this.onSwitch?.(this);
        return;
      }
      this.#files!.drop(forkId);
    }
    // its own turns are computed again; the prefix it reads from the slot, or from the copy
    this.figures.recomputed += 1;
    this.#log({
      type: 'slot-recompute',
      at: this.#clock.now(),
      slot,
      forkId,
      // no file: nobody took its slot since its last request, or that request failed (what
      // the slot holds is unknown), or its save failed or was dropped (logged as such)
      why: file ? 'its restore failed' : !this.switching ? 'switching off' : 'no file of its state',
    });
    const s = this.#slots[slot]!;
    if ((s.holder === null || s.uncertain) && this.#prefixFile) await this.#restorePrefix(slot, signal);
  }

  async #restorePrefix(slot: number, signal: AbortSignal | undefined): Promise<void> {
    const at = this.#clock.now();
    const done = await this.#actions!.restore(slot, this.#prefixFile!, signal).catch((err: unknown) => {
      if (signal?.aborted) throw err;
      return { ok: false, status: 0, message: (err as Error).message } as const;
    });
    // a failed copy costs a recomputed prefix, which the ledger shows; the fork goes on
    if (done.ok) {
      this.figures.prefix_restores += 1;
      this.figures.restore_ms += this.#clock.now() - at;
    }
  }

  /** A fork's own part of its last request, on average: what a recompute instead of a restore costs. */
  averageOwnTokens(): number {
    const forks = [...this.#forks.values()].filter((f) => f.requests > 0);
    return forks.length === 0 ? 0 : forks.reduce((sum, f) => sum + f.lastOwn, 0) / forks.length;
  }
}
