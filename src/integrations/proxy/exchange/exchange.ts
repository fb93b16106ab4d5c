import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ProxyCore } from '../core.ts';
import { readBody } from '../../../core/util/http-body.ts';
import { refuse } from './refuse.ts';
import { loggedBody } from './log.ts';
import { forward } from './forward.ts';
import { AssistantCapture } from './assistant-capture.ts';
import { callerOf, carriedHeaders } from '../fork-calls.ts';
import type { ExchangeRecord } from '../diagnosis/types.ts';
import type { Passage } from './warm-first.ts';
import { readRequest, type RequestRead } from './request.ts';
import { layOut, type LaidOut } from './lay-out.ts';
import { AnswerTap } from './answer.ts';
import { recordOf } from './record.ts';

const SESSION_HEADER = 'x-claude-code-session-id';

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
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

/**
 * The gate step (`--warm-first`): a request whose prefix a sibling is writing waits for that
 * response to begin. `'left'`: the client left while held, and nothing was sent upstream.
 */
export async function passGate(
  core: ProxyCore,
  shape: RequestRead['shape'],
  signal: AbortSignal,
): Promise<Passage | undefined | 'left'> {
  if (!shape || !core.gate) return undefined;
  try {
    return await core.gate.pass(shape, signal);
  } catch {
    return 'left';
  }
}

/**
 * The forward step: send the request and pass the answer on through the tap. `sent` runs once
 * the request is on its way; the promise resolves with who cut the exchange (undefined: nobody)
 * a turn after its last bytes are on their way, so the bookkeeping waits for the I/O of this turn.
 */
function forwardThrough(
  core: ProxyCore,
  req: IncomingMessage,
  res: ServerResponse,
  body: Buffer,
  signal: AbortSignal,
  answer: AnswerTap,
  sent: () => void,
): Promise<string | undefined> {
  return new Promise((resolve) => {
    forward(core, req, res, body, signal, {
      onResponse: (up) => answer.response(up),
      onChunk: (chunk) => answer.chunk(chunk),
      onEnd(error, answered) {
        // The upstream failed before its response began: the client got the proxy's own 502/504.
        answer.answered(answered);
        setImmediate(() => resolve(error));
      },
    });
    sent();
  });
}

/** One exchange on its way, as its steps hand it on. */
interface InFlight {
  seq: number;
  receivedAt: number;
  sentAt: number;
  req: IncomingMessage;
  request: RequestRead;
  passage: Passage | undefined;
  answer: AnswerTap;
  /** Set from the backlog once the request has left. */
  laidOut: LaidOut;
  /** Only a request that may declare a fork tool pays for reading its whole answer. */
  forkCalls: ReturnType<NonNullable<ProxyCore['options']['forkCalls']>['watch']> | undefined;
  capture: AssistantCapture | undefined;
}

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
  const request = readRequest(core, req, raw);
  const passage = await passGate(core, request.shape, controller.signal);
  if (passage === 'left') return; // The client left while held: nothing was sent upstream.
  const sentAt = clock.now();
  const forkCalls =
    request.isMessages && core.options.forkCalls?.mayDeclare(raw) ? core.options.forkCalls.watch() : undefined;
  const capture = forkCalls ? new AssistantCapture() : undefined;
  const answer = new AnswerTap({
    clock,
    sentAt,
    log: core.log !== undefined,
    capture,
    onBegin: (at) => {
      core.later(() => core.index.began(seq, at));
      if (passage && core.gate) core.gate.began(passage);
    },
  });
  const laidOut: LaidOut = { shape: request.shape, analysis: undefined, diagnosis: undefined };
  const x: InFlight = { seq, receivedAt, sentAt, req, request, passage, answer, forkCalls, capture, laidOut };
  try {
    const error = await forwardThrough(core, req, res, request.body, controller.signal, answer, () => {
      core.inFlight++;
      core.later(() => layOutSent(core, x, raw));
      // The log line is written as soon as the request has left (its socket is assigned on the
      // next tick), not with the backlog: a crash mid-stream must not lose it.
      if (core.log) setImmediate(() => logRequest(core, x));
    });
    await finish(core, x, error).catch(() => undefined);
  } finally {
    forkCalls?.settle();
  }
}

/** From the backlog, once the request has left: the lay-out step, and the exchange's start event. */
function layOutSent(core: ProxyCore, x: InFlight, raw: Buffer): void {
  const { seq, req, request, passage } = x;
  x.laidOut = layOut(core, seq, request, raw, x.sentAt, header(req, SESSION_HEADER));
  core.events.emit('exchange-start', {
    seq,
    method: req.method ?? 'GET',
    path: request.path,
    model: x.laidOut.shape?.model,
    heldMs: passage?.heldMs ?? 0,
  });
}

function logRequest(core: ProxyCore, { seq, sentAt, req, request }: InFlight): void {
  core.log?.write({
    type: 'request',
    seq,
    at: sentAt,
    method: req.method,
    path: request.path,
    headers: core.mask.headers(req.headers),
    body: loggedBody(request.body),
    ...(request.strip ? { stripped_billing_block: request.shape!.billing!.text } : {}),
  });
}

/** The exchange is over: the record step, then the fork calls its answer made, the log, the event. */
async function finish(core: ProxyCore, x: InFlight, error: string | undefined): Promise<void> {
  const { seq, passage, answer } = x;
  core.inFlight--;
  const facts = await answer.end();
  if (!answer.began) {
    core.later(() => core.index.failed(seq));
    if (passage && core.gate) core.gate.failed(passage);
  }
  core.catchUp();
  const responseHeaders = core.mask.headers(answer.headers);
  const { status, ttfbMs } = answer;
  const record = recordOf(core, {
    ...x,
    method: x.req.method ?? 'GET',
    status,
    ttfbMs,
    responseHeaders,
    facts,
    error,
  });
  core.ledger.add(record);
  if (x.forkCalls && x.capture && status === 200 && error === undefined && facts?.error === undefined)
    offerForkCalls(core, x, record);
  core.log?.write({
    type: 'response',
    seq,
    at: core.options.clock.now(),
    status,
    headers: responseHeaders,
    ...loggedResponse(answer.logged(), responseHeaders['content-encoding']),
    body_bytes: answer.bytes,
    record,
  });
  core.events.emit('exchange-end', record);
}

/** The fork tool calls a 200's assistant turn made: offered to whoever runs them (`proxy --mcp`). */
function offerForkCalls(core: ProxyCore, x: InFlight, record: ExchangeRecord): void {
  const turn = x.capture!.turn();
  const registry = core.options.forkCalls!;
  for (const block of turn?.content ?? []) {
    const call = registry.callOf(block);
    if (!call) continue;
    x.forkCalls!.offer({
      seq: x.seq,
      body: x.request.body,
      headers: carriedHeaders(x.req.headers),
      turn: turn!,
      call,
      session: record.session,
      caller: callerOf(x.req.headers, x.request.body),
    });
  }
}
