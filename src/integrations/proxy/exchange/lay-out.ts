import type { ProxyCore } from '../core.ts';
import { diagnoseAtSend, type SendContext } from '../diagnosis/diagnose.ts';
import { shapeOf, type RequestShape } from '../diagnosis/shape.ts';
import type { Diagnosis } from '../diagnosis/types.ts';
import type { Placement } from '../report/groups.ts';
import type { RequestRead } from './request.ts';

export interface Analysis {
  shape: RequestShape;
  ctx: SendContext;
  placement: Placement;
}

/** A sent request as the proxy's model of the cache sees it (all undefined: not a Messages call). */
export interface LaidOut {
  shape: RequestShape | undefined;
  analysis: Analysis | undefined;
  diagnosis: Diagnosis | undefined;
}

// At the moment of sending: what is shared, what the cache rules say it reads, where it belongs.
function analyse(
  core: ProxyCore,
  seq: number,
  shape: RequestShape,
  sentAt: number,
  session: string | undefined,
): Analysis {
  const shared = core.index.longestShared(shape);
  const lookback = core.index.lookback(shape, sentAt);
  const placement = core.grouper.place(seq, shape, shared, session);
  const related = core.related(placement.session, shared?.seq, shape.model);
  core.index.sent(seq, shape, sentAt, lookback.read);
  core.remember(seq, { model: shape.model, fingerprint: shape.fingerprint }, placement.session);
  if (placement.fanout) core.ledger.fanout(placement.fanout.id, placement.fanout.members);
  return { shape, ctx: { shape, lookback, shared, related }, placement };
}

/**
 * The lay-out step, run from the backlog once the request has left: its shape (read from the
 * client's bytes, `raw`, unless read before sending), its place in the index and the groups,
 * and the diagnosis as of sending.
 */
export function layOut(
  core: ProxyCore,
  seq: number,
  request: RequestRead,
  raw: Buffer,
  sentAt: number,
  session: string | undefined,
): LaidOut {
  const shape = request.isMessages && !request.readFirst ? shapeOf(raw) : request.shape;
  const analysis = shape ? analyse(core, seq, shape, sentAt, session) : undefined;
  const diagnosis = analysis ? diagnoseAtSend(analysis.ctx) : undefined;
  return { shape, analysis, diagnosis };
}
