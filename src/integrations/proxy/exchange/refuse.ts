import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ProxyCore } from '../core.ts';
import { sendProxyError } from '../proxy-error.ts';
import type { ExchangeRecord } from '../diagnosis/types.ts';

/** A record with nothing learned yet: the fields an exchange fills in as it goes. */
export function blankRecord(seq: number, method: string, path: string, receivedAt: number): ExchangeRecord {
  return {
    seq,
    method,
    path,
    status: undefined,
    model: undefined,
    stream: false,
    receivedAt,
    sentAt: receivedAt,
    ttfbMs: undefined,
    durationMs: undefined,
    requestId: undefined,
    messageId: undefined,
    usage: undefined,
    costUsd: null,
    noCacheUsd: null,
    session: undefined,
    thread: undefined,
    kind: undefined,
    label: undefined,
    fanout: undefined,
    diagnosis: undefined,
    apiMissReason: undefined,
    warm: undefined,
    heldMs: 0,
    strippedBilling: false,
    savedUsd: { warmFirst: 0, stripBilling: 0 },
    error: undefined,
  };
}

/**
 * A request the proxy will not hold: its body is over `maxBodyBytes` (413, as the API answers
 * it), or holding it would take the bodies in memory past `maxInFlightBodyBytes` (503, which
 * every SDK retries after a backoff). Nothing is sent upstream; the refusal is recorded.
 */
export function refuse(
  core: ProxyCore,
  req: IncomingMessage,
  res: ServerResponse,
  seq: number,
  receivedAt: number,
  why: 'too-large' | 'overloaded',
): void {
  const { options } = core;
  const [status, error] =
    why === 'too-large'
      ? [413, `Request exceeds the maximum allowed number of bytes (${options.maxBodyBytes}).`]
      : [
          503,
          `forkcache proxy: request bodies in flight would pass ${options.maxInFlightBodyBytes} bytes; retry shortly`,
        ];
  sendProxyError(res, status, error, why === 'overloaded' ? { 'retry-after': '1' } : {});
  core.mask.learn(req.headers);
  const record: ExchangeRecord = {
    ...blankRecord(seq, req.method ?? 'GET', core.mask.url(req.url ?? '/'), receivedAt),
    status,
    durationMs: options.clock.now() - receivedAt,
    error,
  };
  core.ledger.add(record);
  core.log?.write({
    type: 'refused',
    seq,
    at: options.clock.now(),
    method: req.method,
    path: record.path,
    headers: core.mask.headers(req.headers),
    status,
    record,
  });
  core.events.emit('exchange-end', record);
}
