import { EventEmitter } from 'node:events';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { PromptFingerprint } from '../emulator/cache/render.ts';
import { credentialMask, type CredentialMask } from '../../core/wire/credentials.ts';
import { BodyBudget } from '../../core/util/http-body.ts';
import { ExchangeLog } from './exchange/log.ts';
import { upstreamTarget, type UpstreamTarget } from './exchange/upstream.ts';
import { Grouper } from './report/groups.ts';
import { ProxyLedger } from './report/ledger.ts';
import type { ResolvedProxyOptions } from './options.ts';
import { PrefixIndex } from './diagnosis/prefix-index.ts';
import { PrefixTokenCounter, type RequestShape } from './diagnosis/shape.ts';
import type { ExchangeRecord } from './diagnosis/types.ts';
import { ProxyWarmFirst } from './exchange/warm-first.ts';

/** What the diagnosis needs of an earlier request (not its body: memory stays bounded). */
interface PastShape {
  seq: number;
  shape: Pick<RequestShape, 'model' | 'fingerprint'>;
}

export interface ExchangeStart {
  seq: number;
  method: string;
  path: string;
  model: string | undefined;
  heldMs: number;
}

export interface ProxyEvents {
  /** A request was laid out: from the backlog, by the time an exchange ends or 50 ms after it was sent. */
  'exchange-start': [ExchangeStart];
  'exchange-end': [ExchangeRecord];
}

const PAST_LIMIT = 5_000;
/** The longest the backlog waits for an exchange to end before it is worked off anyway. */
const BACKLOG_MS = 50;

/** The proxy's shared state: one per running proxy. */
export class ProxyCore {
  readonly options: ResolvedProxyOptions;
  readonly upstream: URL;
  readonly target: UpstreamTarget;
  readonly agent: HttpAgent;
  readonly index = new PrefixIndex();
  readonly grouper = new Grouper();
  readonly ledger = new ProxyLedger();
  readonly gate: ProxyWarmFirst | undefined;
  readonly log: ExchangeLog | undefined;
  /** Token estimates for diagnoses and fan-out ceilings (the emulator's tokenizer, memoized per block). */
  readonly counter = new PrefixTokenCounter();
  readonly events = new EventEmitter<ProxyEvents>();
  /** Credentials out of everything the proxy writes (log, stderr, report, `--json`). */
  readonly mask: CredentialMask;
  /** Request bytes held in memory now, over every exchange. */
  readonly bodies: BodyBudget;
  readonly startedAt: number;
  inFlight = 0;
  #seq = 0;
  readonly #past = new Map<number, PastShape>();
  readonly #lastOfSession = new Map<string, number>();
  readonly #lastOfModel = new Map<string, number>();
  readonly #backlog: (() => void)[] = [];
  #backlogTimer: NodeJS.Timeout | undefined;

  constructor(options: ResolvedProxyOptions) {
    this.options = options;
    this.upstream = new URL(options.upstream);
    this.target = upstreamTarget(this.upstream);
    // Keep-alive to the upstream: a new TLS handshake per request would cost more than the proxy.
    this.agent =
      this.upstream.protocol === 'https:' ? new HttpsAgent({ keepAlive: true }) : new HttpAgent({ keepAlive: true });
    this.gate = options.warmFirst
      ? new ProxyWarmFirst({ clock: options.clock, maxWaitMs: options.warmWaitMs })
      : undefined;
    this.mask = credentialMask(options.maskHeaders);
    this.bodies = new BodyBudget(options.maxInFlightBodyBytes);
    this.log = options.logDir === undefined ? undefined : new ExchangeLog(options.logDir, (t) => this.mask.text(t));
    this.startedAt = options.clock.now();
  }

  /**
   * Bookkeeping kept off the request path: between sending a request and passing its answer
   * on, the proxy should be as idle as a bare pipe, since on a small machine the upstream (or a
   * local emulator) may need the same core. Tasks run in the order queued, each with the times
   * it was given, so the prefix model sees sends and response starts in the order they
   * happened; an exchange that ends works the backlog off, and a long stream lets it wait at
   * most BACKLOG_MS.
   */
  later(task: () => void): void {
    this.#backlog.push(task);
    if (this.#backlogTimer === undefined) {
      this.#backlogTimer = setTimeout(() => this.catchUp(), BACKLOG_MS);
      this.#backlogTimer.unref();
    }
  }

  /** Run the queued bookkeeping now (before reading the ledger, and when an exchange ends). */
  catchUp(): void {
    clearTimeout(this.#backlogTimer);
    this.#backlogTimer = undefined;
    // One at a time: a task that throws leaves the rest queued, in order, for the next call.
    while (this.#backlog.length > 0) this.#backlog.shift()!();
  }

  nextSeq(): number {
    return ++this.#seq;
  }

  /** The closest earlier request: the last one of the same session, or the one sharing most. */
  related(session: string | undefined, sharedSeq: number | undefined, model: string): PastShape | undefined {
    const bySession = session === undefined ? undefined : this.#lastOfSession.get(session);
    const seq = bySession ?? sharedSeq;
    if (seq !== undefined) return this.#past.get(seq);
    // Nothing shared at all: compare with the latest request of the same model.
    const last = this.#lastOfModel.get(model);
    return last === undefined ? undefined : this.#past.get(last);
  }

  remember(seq: number, shape: { model: string; fingerprint: PromptFingerprint }, session: string | undefined): void {
    this.#past.set(seq, { seq, shape });
    if (this.#past.size > PAST_LIMIT) this.#past.delete(this.#past.keys().next().value!);
    this.#lastOfModel.delete(shape.model);
    this.#lastOfModel.set(shape.model, seq);
    if (this.#lastOfModel.size > PAST_LIMIT) this.#lastOfModel.delete(this.#lastOfModel.keys().next().value!);
    if (session !== undefined) {
      this.#lastOfSession.delete(session);
      this.#lastOfSession.set(session, seq);
      if (this.#lastOfSession.size > PAST_LIMIT) this.#lastOfSession.delete(this.#lastOfSession.keys().next().value!);
    }
  }
}
