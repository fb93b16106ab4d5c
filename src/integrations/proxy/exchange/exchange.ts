import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { normalizeUsage, type Usage } from '../../../core/ledger/usage.ts';
import { findModel } from '../../../core/models/catalogue.ts';
import type { ProxyCore } from '../core.ts';
import { diagnoseAtSend, settle, type SendContext } from '../diagnosis/diagnose.ts';
import { readBody } from '../../../core/util/http-body.ts';
import { blankRecord, refuse } from './refuse.ts';
import { LOGGED_BODY_LIMIT, loggedBody } from './log.ts';
import { forward } from './forward.ts';
import type { Placement } from '../report/groups.ts';
import { priceOf, readSavedUsd } from '../report/pricing.ts';
import { ResponseTap } from './response-tap.ts';
import { AssistantCapture } from './assistant-capture.ts';
import { callerOf, carriedHeaders } from '../fork-calls.ts';
import { estimateTokens, shapeOf, stripBillingBody, type RequestShape } from '../diagnosis/shape.ts';
import type { ExchangeRecord } from '../diagnosis/types.ts';
import type { Passage } from './warm-first.ts';

const SESSION_HEADER = 'x-claude-code-session-id';

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

interface Analysis {
  shape: RequestShape;
  ctx: SendContext;
  placement: Placement;
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

function usageOf(raw: Record<string, unknown> | undefined): Usage | undefined {
  if (!raw) return undefined;
  try {
    return normalizeUsage(raw);
  } catch {
    return undefined;
  }
}

// A compressed body is logged as base64 (its bytes as sent), anything else as text.
function loggedResponse(bytes: Buffer, encoding: string | string[] | undefined): Record<string, string> {
  return encoding === undefined || encoding === 'identity'
    ? { body: bytes.toString('utf8') }
    : { body_base64: bytes.toString('base64'), body_encoding: String(encoding) };
}

/** One client request through the proxy, from arrival to the last byte and its ledger record. */
export async function handleExchange(core: ProxyCore, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { clock } = core.options;
  const seq = core.nextSeq();
  const receivedAt = clock.now();
  const controller = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) controller.abort(new DOMException('client closed the connection', 'AbortError'));
  });
  const held = await readBody(req, core.options.maxBodyBytes, core.bodies);
  if (held === 'too-large' || held === 'overloaded') return refuse(core, req, res, seq, receivedAt, held);
  try {
    await exchangeWith(core, req, res, held.bytes, seq, receivedAt, controller);
  } finally {
    held.release();
  }
}

const maskedText = (core: ProxyCore, text: string | undefined): string | undefined =>
  text === undefined ? undefined : core.mask.text(text);

async function exchangeWith(
  core: ProxyCore,
  req: IncomingMessage,
  res: ServerResponse,
  raw: Buffer,
  seq: number,
  receivedAt: number,
  controller: AbortController,
): Promise<void> {
  const { clock } = core.options;
  // Credentials (a key in the query string) never reach the ledger, the log or stderr; the
  // header values are remembered, so an upstream that echoes one back has it masked too.
  core.mask.learn(req.headers);
  const path = core.mask.url(req.url ?? '/');
  const isMessages = req.method === 'POST' && /^\/v1\/messages(\?|$)/.test(path);
  // Read the request before sending only when a fix needs it; otherwise from the backlog, so
  // that laying out its prefix costs the request nothing.
  const readFirst = core.gate !== undefined || core.options.stripBillingBlock;
  let shape = isMessages && readFirst ? shapeOf(raw) : undefined;
  const strip = shape !== undefined && core.options.stripBillingBlock && shape.billing !== undefined;
  const body = strip ? stripBillingBody(shape!) : raw;

  let passage: Passage | undefined;
  if (shape && core.gate) {
    try {
      passage = await core.gate.pass(shape, controller.signal);
    } catch {
      return; // The client left while held: nothing was sent upstream.
    }
  }
  const sentAt = clock.now();
  let analysis: Analysis | undefined;
  let diagnosis: ReturnType<typeof diagnoseAtSend> | undefined;
  const afterSend = (): void => {
    if (isMessages && !readFirst) shape = shapeOf(raw);
    analysis = shape ? analyse(core, seq, shape, sentAt, header(req, SESSION_HEADER)) : undefined;
    diagnosis = analysis ? diagnoseAtSend(analysis.ctx) : undefined;
    core.events.emit('exchange-start', {
      seq,
      method: req.method ?? 'GET',
      path,
      model: shape?.model,
      heldMs: passage?.heldMs ?? 0,
    });
  };
  // The log line is written as soon as the request has left (its socket is assigned on the next
  // tick), not with the backlog: a crash mid-stream must not lose it.
  const logRequest = (): void => {
    core.log?.write({
      type: 'request',
      seq,
      at: sentAt,
      method: req.method,
      path,
      headers: core.mask.headers(req.headers),
      body: loggedBody(body),
      ...(strip ? { stripped_billing_block: shape!.billing!.text } : {}),
    });
  };

  let status: number | undefined;
  let upHeaders: IncomingHttpHeaders = {};
  let ttfbMs: number | undefined;
  let began = false;
  let tap: ResponseTap | undefined;
  // Only a request that may declare a fork tool pays for reading its whole answer.
  const forkCalls = isMessages && core.options.forkCalls?.mayDeclare(raw) ? core.options.forkCalls.watch() : undefined;
  const capture = forkCalls ? new AssistantCapture() : undefined;
  const logged: Buffer[] = [];
  let loggedBytes = 0;
  const begin = (): void => {
    if (began || status === undefined || status >= 300) return;
    began = true;
    const at = clock.now();
    core.later(() => core.index.began(seq, at));
    if (passage && core.gate) core.gate.began(passage);
  };

  await new Promise<void>((resolve) => {
    forward(core, req, res, body, controller.signal, {
      onResponse(up) {
        status = up.statusCode;
        ttfbMs = clock.now() - sentAt;
        upHeaders = up.headers;
        tap = new ResponseTap(
          up.headers['content-type'],
          up.headers['content-encoding'] as string | undefined,
          begin,
          status === 200 ? capture : undefined,
        );
      },
      onChunk(chunk) {
        tap?.write(chunk);
        if (core.log && loggedBytes < LOGGED_BODY_LIMIT)
          logged.push(chunk.subarray(0, LOGGED_BODY_LIMIT - loggedBytes));
        loggedBytes += chunk.length;
      },
      onEnd(error, answered) {
        // The upstream failed before its response began: the client got the proxy's own 502/504.
        if (answered !== undefined) status = answered;
        // After the last bytes are on their way: the bookkeeping waits for the I/O of this turn.
        setImmediate(() => void finish(error).then(resolve, resolve));
      },
    });
    core.inFlight++;
    core.later(afterSend);
    if (core.log) setImmediate(logRequest);
  }).finally(() => forkCalls?.settle());

  async function finish(error: string | undefined): Promise<void> {
    core.inFlight--;
    await tap?.end();
    if (!began) {
      core.later(() => core.index.failed(seq));
      if (passage && core.gate) core.gate.failed(passage);
    }
    core.catchUp();
    const responseHeaders = core.mask.headers(upHeaders);
    const facts = tap?.facts;
    const usage = usageOf(facts?.usage);
    const model = shape?.model;
    const prices =
      usage && model ? priceOf(usage, model, sentAt, core.options.modelTable) : { cost: null, noCache: null };
    const record: ExchangeRecord = {
      ...blankRecord(seq, req.method ?? 'GET', path, receivedAt),
      status,
      model,
      stream: shape?.stream ?? false,
      sentAt,
      ttfbMs,
      durationMs: clock.now() - sentAt,
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
      diagnosis,
      apiMissReason: facts?.missReason,
      warm: passage && passage.outcome !== 'free' ? passage.outcome : undefined,
      heldMs: passage?.heldMs ?? 0,
      strippedBilling: strip,
      // an upstream's own words: "invalid x-api-key: <the key>" is masked here, for the ledger, stderr and report
      error: maskedText(core, error ?? (facts?.error ? `${facts.error.type}: ${facts.error.message}` : undefined)),
    };
    if (analysis && usage && model) {
      const { read: r, blocked, tooFar } = analysis.ctx.lookback;
      const needed = Math.max(
        r?.index ?? -1,
        blocked?.index ?? -1,
        tooFar?.index ?? -1,
        analysis.placement.fanout?.branchIndex ?? -1,
      );
      const cum = estimateTokens(analysis.shape, core.counter, needed);
      const minimum = findModel(model, core.options.modelTable)?.minCacheableTokens;
      record.diagnosis = settle(diagnosis!, analysis.ctx, cum, usage.cache_read_input_tokens, strip, minimum);
      const read = analysis.ctx.lookback.read;
      const readTokens = read ? (cum[read.index] ?? 0) : 0;
      // Held, then read what a sibling was writing: without the hold it would have written it.
      if (record.warm === 'held')
        record.savedUsd.warmFirst = readSavedUsd(usage, readTokens, model, sentAt, core.options.modelTable);
      // Stripped, and read an entry another billing block's request wrote: kept, it would have missed.
      if (strip && read && read.entry.billing !== undefined && read.entry.billing !== shape!.billing!.text) {
        record.savedUsd.stripBilling = readSavedUsd(usage, readTokens, model, sentAt, core.options.modelTable);
      }
      const fanout = analysis.placement.fanout;
      if (fanout) core.ledger.fanout(fanout.id, fanout.members, cum[fanout.branchIndex] ?? 0);
    }
    core.ledger.add(record);
    if (forkCalls && capture && status === 200 && error === undefined && facts?.error === undefined) {
      const turn = capture.turn();
      const registry = core.options.forkCalls!;
      for (const block of turn?.content ?? []) {
        const call = registry.callOf(block);
        if (!call) continue;
        forkCalls.offer({
          seq,
          body,
          headers: carriedHeaders(req.headers),
          turn: turn!,
          call,
          session: analysis?.placement.session,
          caller: callerOf(req.headers, body),
        });
      }
    }
    core.log?.write({
      type: 'response',
      seq,
      at: clock.now(),
      status,
      headers: responseHeaders,
      ...loggedResponse(Buffer.concat(logged), responseHeaders['content-encoding']),
      body_bytes: loggedBytes,
      record,
    });
    core.events.emit('exchange-end', record);
  }
}
