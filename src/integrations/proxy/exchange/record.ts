import type { IncomingHttpHeaders } from 'node:http';
import { normalizeUsage, type Usage } from '../../../core/ledger/usage.ts';
import { findModel } from '../../../core/models/catalogue.ts';
import type { ProxyCore } from '../core.ts';
import { settle } from '../diagnosis/diagnose.ts';
import { estimateTokens } from '../diagnosis/shape.ts';
import type { ExchangeRecord } from '../diagnosis/types.ts';
import { priceOf, readSavedUsd } from '../report/pricing.ts';
import type { LaidOut } from './lay-out.ts';
import { blankRecord } from './refuse.ts';
import type { RequestRead } from './request.ts';
import type { ResponseFacts } from './response-tap.ts';
import type { Passage } from './warm-first.ts';

function usageOf(raw: Record<string, unknown> | undefined): Usage | undefined {
  if (!raw) return undefined;
  try {
    return normalizeUsage(raw);
  } catch {
    return undefined;
  }
}

const maskedText = (core: ProxyCore, text: string | undefined): string | undefined =>
  text === undefined ? undefined : core.mask.text(text);

/** One exchange, sent and answered: what its ledger record is made of. */
export interface Exchanged {
  seq: number;
  method: string;
  receivedAt: number;
  sentAt: number;
  request: RequestRead;
  laidOut: LaidOut;
  passage: Passage | undefined;
  status: number | undefined;
  ttfbMs: number | undefined;
  /** The upstream's response headers, masked. */
  responseHeaders: IncomingHttpHeaders;
  facts: ResponseFacts | undefined;
  /** Who cut the exchange, if it was cut. */
  error: string | undefined;
}

/**
 * The record step: the exchange's ledger record, priced, and its diagnosis settled against what
 * the API reported reading (`settleCache`). Call it once the backlog has caught up.
 */
export function recordOf(core: ProxyCore, x: Exchanged): ExchangeRecord {
  const { clock, modelTable } = core.options;
  const { shape, analysis } = x.laidOut;
  const { facts, passage, responseHeaders } = x;
  const usage = usageOf(facts?.usage);
  const model = shape?.model;
  const prices = usage && model ? priceOf(usage, model, x.sentAt, modelTable) : { cost: null, noCache: null };
  const record: ExchangeRecord = {
    ...blankRecord(x.seq, x.method, x.request.path, x.receivedAt),
    status: x.status,
    model,
    stream: shape?.stream ?? false,
    sentAt: x.sentAt,
    ttfbMs: x.ttfbMs,
    durationMs: clock.now() - x.sentAt,
    requestId:
      typeof responseHeaders['request-id'] === 'string' ? core.mask.text(responseHeaders['request-id']) : undefined,
    messageId: facts?.messageId === undefined ? undefined : core.mask.text(facts.messageId),
    usage,
    costUsd: prices.cost,
    noCacheUsd: prices.noCache,
    session: analysis?.placement.session,
    thread: analysis?.placement.thread,
    kind: analysis?.placement.kind,
    label: shape?.label,
    fanout: analysis?.placement.fanout?.id,
    diagnosis: x.laidOut.diagnosis,
    apiMissReason: facts?.missReason,
    warm: passage && passage.outcome !== 'free' ? passage.outcome : undefined,
    heldMs: passage?.heldMs ?? 0,
    strippedBilling: x.request.strip,
    // an upstream's own words: "invalid x-api-key: <the key>" is masked here, for the ledger, stderr and report
    error: maskedText(core, x.error ?? (facts?.error ? `${facts.error.type}: ${facts.error.message}` : undefined)),
  };
  if (usage && model) settleCache(core, record, x, usage, model);
  return record;
}

/**
 * What the cache did against what the proxy expected: the diagnosis settled, the savings of
 * the fixes that made a read happen, and the fan-out's shared tokens for its ceiling.
 */
function settleCache(core: ProxyCore, record: ExchangeRecord, x: Exchanged, usage: Usage, model: string): void {
  const { analysis, diagnosis } = x.laidOut;
  if (!analysis) return;
  const { sentAt, request } = x;
  const { modelTable } = core.options;
  const { read: r, blocked, tooFar } = analysis.ctx.lookback;
  const needed = Math.max(
    r?.index ?? -1,
    blocked?.index ?? -1,
    tooFar?.index ?? -1,
    analysis.placement.fanout?.branchIndex ?? -1,
  );
  const cum = estimateTokens(analysis.shape, core.counter, needed);
  const minimum = findModel(model, modelTable)?.minCacheableTokens;
  record.diagnosis = settle(diagnosis!, analysis.ctx, cum, usage.cache_read_input_tokens, request.strip, minimum);
  const read = analysis.ctx.lookback.read;
  const readTokens = read ? (cum[read.index] ?? 0) : 0;
  // Held, then read what a sibling was writing: without the hold it would have written it.
  if (record.warm === 'held') record.savedUsd.warmFirst = readSavedUsd(usage, readTokens, model, sentAt, modelTable);
  // Stripped, and read an entry another billing block's request wrote: kept, it would have missed.
  if (
    request.strip &&
    read &&
    read.entry.billing !== undefined &&
    read.entry.billing !== request.shape!.billing!.text
  ) {
    record.savedUsd.stripBilling = readSavedUsd(usage, readTokens, model, sentAt, modelTable);
  }
  const fanout = analysis.placement.fanout;
  if (fanout) core.ledger.fanout(fanout.id, fanout.members, cum[fanout.branchIndex] ?? 0);
}
