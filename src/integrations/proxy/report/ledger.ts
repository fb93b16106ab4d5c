import { totalInputTokens } from '../../../core/ledger/usage.ts';
import type { ExchangeRecord, MissReason } from '../diagnosis/types.ts';

/** A fan-out as the ledger reports it. */
export interface ProxyFanOutSummary {
  id: string;
  requests: number;
  /** Estimated tokens of the shared prefix (up to the last shared block). */
  shared_tokens: number;
  input_tokens: number;
  cache_read_input_tokens: number;
  hit_ratio: number;
  /** Reads at most: every member reads the shared prefix, less one write of it when it started cold. */
  max_reads: number;
  max_hit_ratio: number;
  cache_efficiency: number;
  cost_usd: number | null;
  no_cache_usd: number | null;
  members: {
    seq: number;
    kind: string | undefined;
    label: string | undefined;
    thread: string | undefined;
    read: number;
    written: number;
    uncached: number;
    hit_ratio: number;
    reason: MissReason | undefined;
    warm: string | undefined;
  }[];
}

interface FanOutGroup {
  id: string;
  members: number[];
  sharedTokens: number;
}

const RECORD_LIMIT = 20_000;

const ratio = (a: number, b: number): number => (b === 0 ? 0 : a / b);
const sumOrNull = (values: (number | null)[]): number | null =>
  values.some((v) => v === null) ? null : values.reduce<number>((s, v) => s + v!, 0);

/**
 * The proxy's ledger: the last `RECORD_LIMIT` exchanges (the exchange log on disk keeps all),
 * running totals over every exchange, and the fan-outs found so far.
 */
export class ProxyLedger {
  readonly #records = new Map<number, ExchangeRecord>();
  readonly #fanouts = new Map<string, FanOutGroup>();
  readonly #memberOf = new Map<number, string>();
  readonly totals = {
    requests: 0,
    errors: 0,
    input: 0,
    written: 0,
    read: 0,
    output: 0,
    cost: 0,
    noCache: 0,
    unpriced: 0,
    savedWarm: 0,
    savedStrip: 0,
    held: 0,
    stripped: 0,
  };
  readonly reasons: Partial<Record<MissReason, number>> = {};

  add(record: ExchangeRecord): void {
    // The first branch of a fan-out was sent before anyone knew it would have siblings.
    record.fanout ??= this.#memberOf.get(record.seq);
    this.#records.set(record.seq, record);
    if (this.#records.size > RECORD_LIMIT) this.#records.delete(this.#records.keys().next().value!);
    const t = this.totals;
    t.requests += 1;
    if (record.error !== undefined || (record.status ?? 0) >= 400) t.errors += 1;
    if (record.usage) {
      t.input += record.usage.input_tokens;
      t.written += record.usage.cache_creation_input_tokens;
      t.read += record.usage.cache_read_input_tokens;
      t.output += record.usage.output_tokens;
      if (record.costUsd === null || record.noCacheUsd === null) t.unpriced += 1;
      else {
        t.cost += record.costUsd;
        t.noCache += record.noCacheUsd;
      }
    }
    t.savedWarm += record.savedUsd.warmFirst;
    t.savedStrip += record.savedUsd.stripBilling;
    if (record.warm === 'held') t.held += 1;
    if (record.strippedBilling) t.stripped += 1;
    if (record.diagnosis) this.reasons[record.diagnosis.reason] = (this.reasons[record.diagnosis.reason] ?? 0) + 1;
  }

  /** Declare (or update) a fan-out: its members so far and, once estimated, its shared prefix's tokens. */
  fanout(id: string, members: readonly number[], sharedTokens?: number): void {
    const known = this.#fanouts.get(id);
    this.#fanouts.delete(id);
    this.#fanouts.set(id, { id, members: [...members], sharedTokens: sharedTokens ?? known?.sharedTokens ?? 0 });
    if (this.#fanouts.size > RECORD_LIMIT) this.#fanouts.delete(this.#fanouts.keys().next().value!);
    for (const seq of members) {
      this.#memberOf.set(seq, id);
      const record = this.#records.get(seq);
      if (record && record.fanout === undefined) record.fanout = id;
    }
    while (this.#memberOf.size > RECORD_LIMIT * 2) this.#memberOf.delete(this.#memberOf.keys().next().value!);
  }

  records(): ExchangeRecord[] {
    return [...this.#records.values()].sort((a, b) => a.seq - b.seq);
  }

  record(seq: number): ExchangeRecord | undefined {
    return this.#records.get(seq);
  }

  fanoutSummaries(): ProxyFanOutSummary[] {
    const out: ProxyFanOutSummary[] = [];
    for (const f of this.#fanouts.values()) {
      const members = f.members
        .map((seq) => this.#records.get(seq))
        .filter((r): r is ExchangeRecord => r?.usage !== undefined)
        .sort((a, b) => a.sentAt - b.sentAt);
      if (members.length < 2) continue;
      const input = members.reduce((s, r) => s + totalInputTokens(r.usage!), 0);
      const read = members.reduce((s, r) => s + Math.min(f.sharedTokens, r.usage!.cache_read_input_tokens), 0);
      // Cold start: the first member could not read the shared prefix, so it is written once.
      const cold = members[0]!.usage!.cache_read_input_tokens < f.sharedTokens;
      const maxReads = Math.max(0, members.length * f.sharedTokens - (cold ? f.sharedTokens : 0));
      out.push({
        id: f.id,
        requests: members.length,
        shared_tokens: f.sharedTokens,
        input_tokens: input,
        cache_read_input_tokens: members.reduce((s, r) => s + r.usage!.cache_read_input_tokens, 0),
        hit_ratio: ratio(
          members.reduce((s, r) => s + r.usage!.cache_read_input_tokens, 0),
          input,
        ),
        max_reads: maxReads,
        max_hit_ratio: ratio(maxReads, input),
        cache_efficiency: maxReads === 0 ? 1 : Math.min(1, read / maxReads),
        cost_usd: sumOrNull(members.map((r) => r.costUsd)),
        no_cache_usd: sumOrNull(members.map((r) => r.noCacheUsd)),
        members: members.map((r) => ({
          seq: r.seq,
          kind: r.kind,
          label: r.label,
          thread: r.thread,
          read: r.usage!.cache_read_input_tokens,
          written: r.usage!.cache_creation_input_tokens,
          uncached: r.usage!.input_tokens,
          hit_ratio: ratio(r.usage!.cache_read_input_tokens, totalInputTokens(r.usage!)),
          reason: r.diagnosis?.reason,
          warm: r.warm,
        })),
      });
    }
    return out;
  }
}
