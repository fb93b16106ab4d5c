import type { WireError } from '../../util/errors.ts';
import { transcriptDirectiveOf } from '../../fork/directive.ts';
import type { AdmissionGate, SpendPricing } from '../../gate/admission/admission-gate.ts';
import type { ForkOutcome } from '../../loop/types.ts';
import { emptyOutcome } from '../../pool/fork-attempts.ts';
import type { FrozenPrefix } from '../../prefix/freeze.ts';
import { cacheKeyOf } from '../../loop/transport.ts';
import type { ProviderAdapter } from '../provider.ts';
import type { RequestCost } from '../../rate-limits/report.ts';
import { loadRunKey } from '../../run-dir/run-key.ts';
import { JsonlTranscript } from '../../run-dir/transcript.ts';
import type { ResolvedEngineOptions } from '../options.ts';
import type { ForkSpec } from './types.ts';

/**
 * A queued fork's first request as its worker will send it (the wire's body of its child, at the
 * engine's `max_tokens`, with the prefix's child marker), counted as the admission gate counts it.
 * Undefined when its first step is not a plain request: a last turn to judge, read-only calls to
 * run again, or a prompt to add (`resume --retry`, a fix-up) may end the fork or change the body;
 * such a fork goes its usual way.
 */
export function firstRequestCost(
  prefix: FrozenPrefix,
  spec: ForkSpec,
  options: Pick<ResolvedEngineOptions, 'api' | 'maxTokens'>,
  provider: ProviderAdapter,
): RequestCost | undefined {
  const { start } = spec;
  if (start.judgeLast || start.rerun.length > 0 || start.prompt) return undefined;
  const perRequest = { max_tokens: options.maxTokens, stream: true };
  const body = provider.forkBody(prefix, options.api.wire, cacheKeyOf(prefix.sha256));
  const bytes = body(start.child, perRequest, prefix.childMarker).byteLength;
  return { bytes, freshBytes: Math.max(0, bytes - prefix.head.byteLength), maxTokens: options.maxTokens };
}

/** A queued fork the cap will never admit, and the least its first request could be held at. */
export interface NeverAdmitted<T> {
  fork: T;
  floorNano: number;
}

/** What the queue's look needs of a fan-out. */
interface QueueCapOptions<T> {
  spend: SpendPricing;
  admission: AdmissionGate;
  /** A fork's first request (`firstRequestCost`), asked once per fork. */
  costOf: (index: number) => RequestCost | undefined;
  /** The forks still queued now. */
  queued: () => readonly T[];
  /** Whether some fork of the fan-out runs (its requests may still change what the gate holds). */
  running: () => boolean;
  /** End these forks `capped`, together. */
  capped: (never: NeverAdmitted<T>[]) => void;
}

/**
 * The spend cap's look at a fan-out's queue (issue 42: 69 queued forks each took a slot, a
 * worktree and a refused first request, one after another, minutes under load). A queued fork
 * whose first request could never be held below the most room the cap can ever have again is
 * ended `capped` at once, with no slot, worktree or request of its own; every other queued fork
 * stays queued and runs.
 *
 * The test: the least the admission gate could ever hold for that request
 * (`AdmissionGate.firstFloorNano`, the gate's own estimate at the fan-out's most favourable
 * reachable state) is more than what is left of the cap if every request in flight settled at
 * nothing (`SpendCap.maxRoomNano`). Both sides only move one way: spending only grows, and the
 * floor can only rise. So it holds while requests are in flight, and a fork it ends could never
 * have been admitted. Comparing the gate's present estimate instead would not be safe, in flight
 * or not: the first answered turn, or the prefix becoming readable, can still lower it. The
 * floor counts on the prefix becoming readable only while some request could still write it: a
 * pre-warm the cap refused, with nothing running and no first request fitting at its worst case,
 * ends the whole queue at once.
 *
 * Looked at once before the forks start (a resumed run's earlier spending, the pre-warm), then
 * after each growth of spending (`SpendCap.onSpend`), in a microtask: once per batch of
 * settlements, outside the cap's own bookkeeping.
 */
export class QueueCap<T extends { index: number }> {
  readonly #o: QueueCapOptions<T>;
  readonly #costs = new Map<number, RequestCost | undefined>();
  #scheduled = false;

  constructor(options: QueueCapOptions<T>) {
    this.#o = options;
  }

  /** Look now and after each growth of spending; returns the unsubscribe. */
  watch(): () => void {
    const off = this.#o.spend.cap.onSpend(() => this.#schedule());
    this.look();
    return off;
  }

  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    queueMicrotask(() => {
      this.#scheduled = false;
      this.look();
    });
  }

  /** End the queued forks the cap can never admit, together. */
  look(): void {
    const room = this.#o.spend.cap.maxRoomNano();
    const queued = this.#o.queued().map((fork) => ({ fork, cost: this.#costOf(fork.index) }));
    const warmable = this.#warmable(queued, room);
    const never: NeverAdmitted<T>[] = [];
    for (const { fork, cost } of queued) {
      const floorNano = cost && this.#o.admission.firstFloorNano(cost, warmable);
      if (floorNano !== undefined && floorNano > room) never.push({ fork, floorNano });
    }
    if (never.length > 0) this.#o.capped(never);
  }

  /**
   * Whether the shared prefix can still become readable to a first request: it is now, or a
   * request of the fan-out that could write it may still be admitted (a fork runs, or a queued
   * fork's first request fits at its worst case, or goes its usual way). When not (a pre-warm the
   * cap refused, nothing running, no first request fitting), every hold stays at its worst case.
   */
  #warmable(queued: readonly { cost: RequestCost | undefined }[], room: number): boolean {
    const { admission } = this.#o;
    if (admission.readsSharedNow() || this.#o.running()) return true;
    return queued.some(({ cost }) => cost === undefined || (admission.firstWorstNano(cost) ?? 0) <= room);
  }

  #costOf(index: number): RequestCost | undefined {
    if (!this.#costs.has(index)) this.#costs.set(index, this.#o.costOf(index));
    return this.#costs.get(index);
  }
}

/**
 * The outcome of a queued fork the cap ended, as its loop would have ended it at a refused first
 * request (its earlier turns counted, nothing sent), written to its transcript as the worker
 * would have: a `start` line for a fork that never ran, then its `end`. `status`, `review` and
 * `resume` read it like any other capped fork's.
 */
export function cappedBeforeStart(
  spec: ForkSpec,
  error: WireError,
  transcript: { path: string; forkId: string; prefixSha256: string } | undefined,
): ForkOutcome {
  const outcome: ForkOutcome = {
    ...emptyOutcome('capped', error),
    turns: spec.start.turnsDone,
    messages: [...spec.start.child.messages],
  };
  if (transcript) {
    const sink = new JsonlTranscript(transcript.path, loadRunKey());
    if (spec.start.turnsDone === 0)
      sink.start(transcript.forkId, transcript.prefixSha256, transcriptDirectiveOf(spec.start.child));
    sink.end(outcome);
  }
  return outcome;
}
