import type { Position } from '../../emulator/cache/render.ts';
import type { Lookback } from './prefix-index.ts';
import type { RequestShape } from './shape.ts';
import type { BlockRef, Diagnosis, MissReason } from './types.ts';

function blockRef(p: Position): BlockRef {
  const path = p.segment === 'messages' ? `messages.${p.message}.content.${p.block}` : `${p.segment}.${p.block}`;
  return { index: p.index, segment: p.segment, message: p.message, block: p.block, type: p.type, path };
}

/** What the proxy knew about a request when it forwarded it. */
export interface SendContext {
  shape: RequestShape;
  lookback: Lookback;
  shared: { index: number; seq: number } | undefined;
  /** The closest earlier request's shape (same session, or the one sharing most), for what changed. */
  related: { seq: number; shape: Pick<RequestShape, 'model' | 'fingerprint'> } | undefined;
}

/** Which part changed against the related request: model → tools → system → settings → messages. */
function changedPart(now: RequestShape, before: Pick<RequestShape, 'model' | 'fingerprint'>): MissReason | undefined {
  if (now.model !== before.model) return 'model_changed';
  if (now.fingerprint.tools !== before.fingerprint.tools) return 'tools_changed';
  if (now.fingerprint.system !== before.fingerprint.system) return 'system_changed';
  const a = before.fingerprint.messages;
  const b = now.fingerprint.messages;
  if (now.fingerprint.settings !== before.fingerprint.settings || !a.every((d, i) => d === b[i]))
    return 'messages_changed';
  return undefined;
}

/**
 * The structural diagnosis, at the time of sending: the first block that differs from earlier
 * requests, and what the cache rules say the request reads and why it cannot read more.
 * Token figures are filled in by `settle` once the response's usage is known.
 */
export function diagnoseAtSend(ctx: SendContext): Diagnosis {
  const { shape, lookback, shared, related } = ctx;
  const next = shape.positions[(shared?.index ?? -1) + 1];
  const base = {
    firstDiff: next && shared ? blockRef(next) : undefined,
    sharedBlocks: (shared?.index ?? -1) + 1,
    relatedTo: shared?.seq ?? related?.seq,
    predictedReadTokens: 0,
    missedTokens: 0,
  };
  const where = (index: number): string => blockRef(shape.positions[index]!).path;
  const { read, blocked, tooFar } = lookback;
  if (blocked?.why === 'pending') {
    return {
      ...base,
      reason: 'sibling_not_readable',
      relatedTo: blocked.entry.writer,
      detail: `#${blocked.entry.writer} was writing the entry at ${where(blocked.index)}, but its response had not begun when this request was sent (an entry is readable only from then): hold siblings until it begins (--warm-first)`,
    };
  }
  if (blocked?.why === 'expired') {
    return {
      ...base,
      reason: 'expired',
      relatedTo: blocked.entry.writer,
      detail: `the entry at ${where(blocked.index)} written by #${blocked.entry.writer} had expired (lifetime ${blocked.entry.ttlMs / 60_000} min since its last use)`,
    };
  }
  if (tooFar) {
    return {
      ...base,
      reason: 'marker_too_far_back',
      relatedTo: tooFar.entry.writer,
      detail: `#${tooFar.entry.writer} wrote an entry at ${where(tooFar.index)}, ${Number.isFinite(tooFar.distance) ? `${tooFar.distance} positions back from the next marker` : 'after the last marker'}; a marker looks back at most 20 positions: put a marker within reach`,
    };
  }
  if (read) {
    return {
      ...base,
      reason: 'read',
      relatedTo: read.entry.writer,
      detail: `reads the entry at ${where(read.index)} written by #${read.entry.writer}`,
    };
  }
  const changed = related ? changedPart(shape, related.shape) : undefined;
  if (changed && (!shared || base.firstDiff?.segment !== 'messages')) {
    const detail: Record<string, string> = {
      model_changed: `model ${related!.shape.model} → ${shape.model}: a cache never crosses models`,
      tools_changed: `tool definitions differ from #${related!.seq}'s${base.firstDiff ? ` from ${base.firstDiff.path}` : ''}: changing tools invalidates everything`,
      system_changed: `the system prompt differs from #${related!.seq}'s${base.firstDiff ? ` at ${base.firstDiff.path}` : ''}, ahead of every marker`,
      messages_changed: `the settings or an earlier message differ from #${related!.seq}'s`,
    };
    return { ...base, reason: changed, detail: detail[changed] ?? changed };
  }
  if (shared) {
    return {
      ...base,
      reason: 'no_marker_on_shared_prefix',
      detail: `shares ${base.sharedBlocks} blocks with #${shared.seq} up to ${where(shared.index)}, but no earlier request wrote an entry there (writes happen only at markers)`,
    };
  }
  return { ...base, reason: 'new_prefix', detail: 'nothing shared with an earlier request: the first of its prefix' };
}

/**
 * Settle the diagnosis with the tokens (estimated per position) and the usage the API reported.
 * When the API read clearly less than the rules predict: a prefix shorter than the model's
 * minimum cacheable length was never written; else the upstream is keying something the rules
 * leave out: Claude Code's billing block if it differs from the writer's, else unknown.
 * `minCacheableTokens`: the model's, from the catalogue (undefined for a model it does not know).
 */
export function settle(
  diagnosis: Diagnosis,
  ctx: SendContext,
  cumTokens: readonly number[],
  actualRead: number,
  stripped: boolean,
  minCacheableTokens?: number,
): Diagnosis {
  const { read, blocked, tooFar } = ctx.lookback;
  const predicted = read ? (cumTokens[read.index] ?? 0) : 0;
  const better = blocked ?? tooFar;
  const possible = better ? (cumTokens[better.index] ?? 0) : predicted;
  const settled = { ...diagnosis, predictedReadTokens: predicted, missedTokens: Math.max(0, possible - actualRead) };
  if (diagnosis.reason !== 'read' || actualRead >= predicted / 2) return settled;
  if (minCacheableTokens !== undefined && predicted < minCacheableTokens) {
    return {
      ...settled,
      reason: 'below_minimum',
      missedTokens: 0,
      detail: `the prefix up to ${blockRef(ctx.shape.positions[read!.index]!).path} is about ${predicted} tokens, below ${ctx.shape.model}'s minimum cacheable length of ${minCacheableTokens}: the upstream writes no entry that short, so there was nothing to read`,
    };
  }
  const writerBilling = read!.entry.billing;
  if (!stripped && ctx.shape.billing && writerBilling !== undefined && writerBilling !== ctx.shape.billing.text) {
    return {
      ...settled,
      reason: 'volatile_system_block',
      missedTokens: predicted - actualRead,
      detail: `Claude Code's billing block (${ctx.shape.billing.text.slice(0, 60)}) differs from #${read!.entry.writer}'s and the upstream caches it: it sits ahead of every marker (--strip-billing-block)`,
    };
  }
  return {
    ...settled,
    reason: 'upstream_miss',
    missedTokens: predicted - actualRead,
    detail: `the upstream read ${actualRead} tokens where the cache rules predict about ${predicted} (${diagnosis.detail})`,
  };
}
