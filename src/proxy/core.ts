import { EventEmitter } from 'node:events';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { PromptFingerprint } from '../emulator/cache/render.ts';
import { ExchangeLog } from './exchange-log.ts';
import { Grouper } from './groups.ts';
import { ProxyLedger } from './ledger.ts';
import type { ResolvedProxyOptions } from './options.ts';
import { PrefixIndex } from './prefix-index.ts';
import { PrefixTokenCounter, type RequestShape } from './shape.ts';
import type { ExchangeRecord } from './types.ts';
import { ProxyWarmFirst } from './warm-first.ts';

/** What the diagnosis needs of an earlier request (not its body: memory stays bounded). */
export interface PastShape {
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
  'exchange-start': [ExchangeStart];
  'exchange-end': [ExchangeRecord];
}

const PAST_LIMIT = 5_000;

/** The proxy's shared state: one per running proxy. */
export class ProxyCore {
  readonly options: ResolvedProxyOptions;
  readonly upstream: URL;
  readonly agent: HttpAgent;
  readonly index = new PrefixIndex();
  readonly grouper = new Grouper();
  readonly ledger = new ProxyLedger();
  readonly gate: ProxyWarmFirst | undefined;
  readonly log: ExchangeLog | undefined;
  /** Token estimates for diagnoses and fan-out ceilings (the emulator's tokenizer, memoized per block). */
  readonly counter = new PrefixTokenCounter();
  readonly events = new EventEmitter<ProxyEvents>();
  readonly startedAt: number;
  inFlight = 0;
  #seq = 0;
  readonly #past = new Map<number, PastShape>();
  readonly #lastOfSession = new Map<string, number>();
  readonly #lastOfModel = new Map<string, number>();

  constructor(options: ResolvedProxyOptions) {
    this.options = options;
    this.upstream = new URL(options.upstream);
    // Keep-alive to the upstream: a new TLS handshake per request would cost more than the proxy.
    this.agent = this.upstream.protocol === 'https:' ? new HttpsAgent({ keepAlive: true }) : new HttpAgent({ keepAlive: true });
    this.gate = options.warmFirst ? new ProxyWarmFirst({ clock: options.clock, maxWaitMs: options.warmWaitMs }) : undefined;
    this.log = options.logDir === undefined ? undefined : new ExchangeLog(options.logDir);
    this.startedAt = options.clock.now();
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
