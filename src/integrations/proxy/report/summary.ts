import type { ProxyCore } from '../core.ts';
import type { ProxyFanOutSummary } from './ledger.ts';
import type { MissReason } from '../diagnosis/types.ts';

/** The `--json` summary of a proxy run. */
export interface ProxySummary {
  upstream: string;
  started_at: string;
  ended_at: string;
  options: { warm_first: boolean; strip_billing_block: boolean };
  requests: { total: number; errors: number; held: number; stripped_billing_block: number };
  usage: {
    input_tokens: number;
    cache_creation_input_tokens: number;
    cache_read_input_tokens: number;
    output_tokens: number;
  };
  cache: { hit_ratio: number };
  cost_usd: { actual: number; no_cache: number; saved_vs_no_cache: number; unpriced_requests: number };
  saved_by_proxy_usd: { warm_first: number; strip_billing_block: number; total: number };
  diagnoses: Partial<Record<MissReason, number>>;
  sessions: { id: string; requests: number; cost_usd: number }[];
  fanouts: ProxyFanOutSummary[];
  log: string | undefined;
}

const usd = (x: number): number => Math.round(x * 1e9) / 1e9;

export function proxySummary(core: ProxyCore): ProxySummary {
  const t = core.ledger.totals;
  const input = t.input + t.written + t.read;
  const sessions = new Map<string, { id: string; requests: number; cost_usd: number }>();
  for (const r of core.ledger.records()) {
    if (r.session === undefined) continue;
    const s = sessions.get(r.session) ?? { id: r.session, requests: 0, cost_usd: 0 };
    s.requests += 1;
    s.cost_usd = usd(s.cost_usd + (r.costUsd ?? 0));
    sessions.set(r.session, s);
  }
  return {
    upstream: core.mask.url(core.options.upstream),
    started_at: new Date(core.startedAt).toISOString(),
    ended_at: new Date(core.options.clock.now()).toISOString(),
    options: { warm_first: core.options.warmFirst, strip_billing_block: core.options.stripBillingBlock },
    requests: { total: t.requests, errors: t.errors, held: t.held, stripped_billing_block: t.stripped },
    usage: {
      input_tokens: t.input,
      cache_creation_input_tokens: t.written,
      cache_read_input_tokens: t.read,
      output_tokens: t.output,
    },
    cache: { hit_ratio: input === 0 ? 0 : t.read / input },
    cost_usd: {
      actual: usd(t.cost),
      no_cache: usd(t.noCache),
      saved_vs_no_cache: usd(t.noCache - t.cost),
      unpriced_requests: t.unpriced,
    },
    saved_by_proxy_usd: {
      warm_first: usd(t.savedWarm),
      strip_billing_block: usd(t.savedStrip),
      total: usd(t.savedWarm + t.savedStrip),
    },
    diagnoses: { ...core.ledger.reasons },
    sessions: [...sessions.values()],
    fanouts: core.ledger.fanoutSummaries(),
    log: core.log?.path,
  };
}
