import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/util/clock.ts';
import { ProxyCore } from '../../../src/integrations/proxy/core.ts';
import { resolveProxyOptions, type ProxyOptions } from '../../../src/integrations/proxy/options.ts';
import { AnswerTap } from '../../../src/integrations/proxy/exchange/answer.ts';
import { passGate } from '../../../src/integrations/proxy/exchange/exchange.ts';
import { layOut } from '../../../src/integrations/proxy/exchange/lay-out.ts';
import { LOGGED_BODY_LIMIT } from '../../../src/integrations/proxy/exchange/log.ts';
import { recordOf, type Exchanged } from '../../../src/integrations/proxy/exchange/record.ts';
import { readRequest } from '../../../src/integrations/proxy/exchange/request.ts';
import { MODEL, cc, words } from './helpers.ts';

/*
 * The steps one exchange passes through (exchange.ts runs them in order, and the proxy tests
 * run them through real HTTP): read → gate → forward (through the answer tap) → lay out → record.
 * Here each on its own, on a real ProxyCore with a manual clock: no server, no upstream.
 */

const KEY = 'sk-ant-test-0123456789abcdef';
const BILLING = 'x-anthropic-billing-header: cc_version=2.1.332; cc_entrypoint=cli; cch=abcde;';

function core(options: ProxyOptions = {}): { core: ProxyCore; clock: ManualClock } {
  const clock = new ManualClock(1_000);
  return { core: new ProxyCore(resolveProxyOptions({ clock, ...options })), clock };
}

/** The parts of a client request the read step looks at. */
function req(method: string, url: string, headers: Record<string, string> = {}): IncomingMessage {
  return { method, url, headers } as unknown as IncomingMessage;
}

/** A Messages body: a long shared block with a marker, then `tail`; `billing` first in system when set. */
function body(tail: string, billing?: string): Buffer {
  return Buffer.from(
    JSON.stringify({
      model: MODEL,
      max_tokens: 16,
      system: [...(billing ? [{ type: 'text', text: billing }] : []), { type: 'text', text: 'You are terse.' }],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: words(400, 'shared'), cache_control: cc },
            { type: 'text', text: tail },
          ],
        },
      ],
    }),
  );
}

const usage = (read: number) => ({
  input_tokens: 7,
  output_tokens: 3,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: read,
});

describe('read: what the proxy knows of a request before sending it', () => {
  it('masks a key in the query string, and tells a Messages call from anything else', () => {
    const { core: c } = core();
    const read = readRequest(c, req('POST', `/v1/messages?beta=true&key=${KEY}`), body('a'));
    expect(read.path).not.toContain(KEY);
    expect(read.path).toMatch(/^\/v1\/messages\?beta=true&key=/);
    expect(read.isMessages).toBe(true);
    expect(readRequest(c, req('GET', '/v1/models'), Buffer.alloc(0)).isMessages).toBe(false);
    expect(readRequest(c, req('POST', '/v1/messages/count_tokens'), body('a')).isMessages).toBe(false);
  });

  it('learns the credential headers, so an upstream echoing the key has it masked', () => {
    const { core: c } = core();
    readRequest(c, req('POST', '/v1/messages', { 'x-api-key': KEY }), body('a'));
    expect(c.mask.text(`invalid x-api-key: ${KEY}`)).not.toContain(KEY);
  });

  it('with no fix on, leaves the shape to the backlog and sends the bytes as they came', () => {
    const { core: c } = core();
    const raw = body('a', BILLING);
    const read = readRequest(c, req('POST', '/v1/messages'), raw);
    expect(read).toMatchObject({ readFirst: false, shape: undefined, strip: false });
    expect(read.body).toBe(raw);
  });

  it('with --strip-billing-block, reads the shape first and sends the body without the block', () => {
    const { core: c } = core({ stripBillingBlock: true });
    const read = readRequest(c, req('POST', '/v1/messages'), body('a', BILLING));
    expect(read.readFirst).toBe(true);
    expect(read.shape?.billing?.text).toBe(BILLING);
    expect(read.strip).toBe(true);
    expect(read.body.toString()).not.toContain('x-anthropic-billing-header');
    expect(read.body.toString()).toContain('You are terse.');
    // no block to strip: the bytes go as they came
    const plain = body('a');
    const kept = readRequest(c, req('POST', '/v1/messages'), plain);
    expect(kept.strip).toBe(false);
    expect(kept.body).toBe(plain);
  });
});

describe('gate: --warm-first before sending', () => {
  it('lets everything through when the gate is off or the request has no shape', async () => {
    const { core: off } = core();
    const shape = readRequest(core({ warmFirst: true }).core, req('POST', '/v1/messages'), body('a')).shape;
    expect(await passGate(off, shape, new AbortController().signal)).toBeUndefined();
    expect(await passGate(core({ warmFirst: true }).core, undefined, new AbortController().signal)).toBeUndefined();
  });

  it('the first request of a prefix warms it; a sibling whose client leaves while held is never sent', async () => {
    const { core: c } = core({ warmFirst: true });
    const first = readRequest(c, req('POST', '/v1/messages'), body('a')).shape;
    const passage = await passGate(c, first, new AbortController().signal);
    expect(passage).toMatchObject({ outcome: 'warmer', heldMs: 0 });
    const second = readRequest(c, req('POST', '/v1/messages'), body('b')).shape;
    const left = new AbortController();
    const held = passGate(c, second, left.signal);
    left.abort(new DOMException('client closed the connection', 'AbortError'));
    expect(await held).toBe('left');
  });
});

describe('lay out: the sent request in the model of the cache', () => {
  it('lays out nothing of a call that is not Messages', () => {
    const { core: c } = core();
    const read = readRequest(c, req('GET', '/v1/models'), Buffer.alloc(0));
    expect(layOut(c, 1, read, Buffer.alloc(0), 1_000, undefined)).toEqual({
      shape: undefined,
      analysis: undefined,
      diagnosis: undefined,
    });
  });

  it('reads the shape from the client bytes, and relates a request to the earlier one it shares a prefix with', () => {
    const { core: c } = core();
    const a = body('first tail');
    const first = layOut(c, 1, readRequest(c, req('POST', '/v1/messages'), a), a, 1_000, 'session-1');
    expect(first.shape?.model).toBe(MODEL);
    expect(first.analysis?.placement.session).toBeDefined();
    expect(first.diagnosis?.relatedTo).toBeUndefined();
    const b = body('second tail');
    const second = layOut(c, 2, readRequest(c, req('POST', '/v1/messages'), b), b, 1_100, 'session-1');
    expect(second.analysis?.ctx.shared?.seq).toBe(1);
    expect(second.diagnosis?.relatedTo).toBe(1);
    expect(second.diagnosis!.sharedBlocks).toBeGreaterThan(0);
  });
});

describe('tap: what the proxy learns of the answer while passing it on', () => {
  function tap(log = true): { answer: AnswerTap; begun: number[]; clock: ManualClock } {
    const clock = new ManualClock(1_000);
    const begun: number[] = [];
    const answer = new AnswerTap({ clock, sentAt: 1_000, log, capture: undefined, onBegin: (at) => begun.push(at) });
    return { answer, begun, clock };
  }

  it('takes the status, the headers and the time to the first byte; a 2xx begins once', async () => {
    const { answer, begun, clock } = tap();
    clock.advance(40);
    answer.response({ statusCode: 200, headers: { 'content-type': 'application/json', 'request-id': 'req_1' } });
    expect(answer).toMatchObject({ status: 200, ttfbMs: 40, began: true });
    expect(answer.headers['request-id']).toBe('req_1');
    const json = JSON.stringify({ id: 'msg_1', type: 'message', usage: usage(5) });
    answer.chunk(Buffer.from(json.slice(0, 10)));
    answer.chunk(Buffer.from(json.slice(10)));
    const facts = await answer.end();
    expect(facts?.messageId).toBe('msg_1');
    expect(facts?.usage).toMatchObject({ cache_read_input_tokens: 5 });
    expect(begun).toEqual([1_040]);
    expect(answer.logged().toString()).toBe(json);
    expect(answer.bytes).toBe(json.length);
  });

  it('an error status never begins (what the request wrote is not readable)', async () => {
    const { answer, begun } = tap();
    answer.response({ statusCode: 529, headers: { 'content-type': 'application/json' } });
    answer.chunk(Buffer.from('{"type":"error","error":{"type":"overloaded_error","message":"busy"}}'));
    const facts = await answer.end();
    expect(answer.began).toBe(false);
    expect(begun).toEqual([]);
    expect(facts?.error).toEqual({ type: 'overloaded_error', message: 'busy' });
  });

  it('no response at all: the status the proxy answered itself, no facts', async () => {
    const { answer } = tap();
    answer.answered(undefined);
    expect(answer.status).toBeUndefined();
    answer.answered(502);
    expect(answer.status).toBe(502);
    expect(await answer.end()).toBeUndefined();
  });

  it('keeps at most LOGGED_BODY_LIMIT bytes for the log, and none without a log, counting them all', async () => {
    const { answer } = tap();
    answer.response({ statusCode: 200, headers: { 'content-type': 'text/plain' } });
    const half = Buffer.alloc(LOGGED_BODY_LIMIT / 2 + 10, 0x61);
    for (let i = 0; i < 3; i++) answer.chunk(half);
    await answer.end();
    expect(answer.logged().length).toBe(LOGGED_BODY_LIMIT);
    expect(answer.bytes).toBe(3 * half.length);
    const { answer: quiet } = tap(false);
    quiet.response({ statusCode: 200, headers: { 'content-type': 'text/plain' } });
    quiet.chunk(half);
    await quiet.end();
    expect(quiet.logged().length).toBe(0);
    expect(quiet.bytes).toBe(half.length);
  });
});

describe('record: the ledger record of an exchange', () => {
  function exchanged(c: ProxyCore, over: Partial<Exchanged> = {}): Exchanged {
    const raw = body('a');
    const request = readRequest(c, req('POST', '/v1/messages'), raw);
    return {
      seq: 1,
      method: 'POST',
      receivedAt: 990,
      sentAt: 1_000,
      request,
      laidOut: layOut(c, 1, request, raw, 1_000, undefined),
      passage: undefined,
      status: 200,
      ttfbMs: 40,
      responseHeaders: {},
      facts: undefined,
      error: undefined,
      ...over,
    };
  }

  it('times, prices and masks it', () => {
    const { core: c, clock } = core();
    c.mask.learn({ 'x-api-key': KEY });
    clock.advance(250);
    const record = recordOf(
      c,
      exchanged(c, {
        responseHeaders: { 'request-id': `req_${KEY}` },
        facts: { messageId: 'msg_1', usage: usage(0), missReason: undefined, error: undefined },
      }),
    );
    expect(record).toMatchObject({ seq: 1, status: 200, model: MODEL, receivedAt: 990, sentAt: 1_000, ttfbMs: 40 });
    expect(record.durationMs).toBe(250);
    expect(record.requestId).not.toContain(KEY);
    expect(record.messageId).toBe('msg_1');
    expect(record.costUsd).toBeGreaterThan(0);
    expect(record.noCacheUsd).toBeGreaterThan(0);
    expect(record.warm).toBeUndefined();
    expect(record.diagnosis).toBeDefined();
  });

  it('without usage it is unpriced; the upstream error names its type, masked', () => {
    const { core: c } = core();
    c.mask.learn({ 'x-api-key': KEY });
    const error = { type: 'authentication_error', message: `invalid x-api-key: ${KEY}` };
    const record = recordOf(
      c,
      exchanged(c, { status: 401, facts: { messageId: undefined, usage: undefined, missReason: undefined, error } }),
    );
    expect(record).toMatchObject({ costUsd: null, noCacheUsd: null });
    expect(record.error).toMatch(/^authentication_error: invalid x-api-key: /);
    expect(record.error).not.toContain(KEY);
    // who cut the exchange comes first
    expect(recordOf(c, exchanged(c, { error: 'client closed the connection' })).error).toBe(
      'client closed the connection',
    );
  });

  it('a request held by the gate that then read its sibling’s entry is credited with what it saved', () => {
    const { core: c } = core();
    const a = body('first tail');
    layOut(c, 1, readRequest(c, req('POST', '/v1/messages'), a), a, 1_000, undefined);
    c.index.began(1, 1_050); // the first one's response began: its entry is readable
    const b = body('second tail');
    const request = readRequest(c, req('POST', '/v1/messages'), b);
    const laidOut = layOut(c, 2, request, b, 1_100, undefined);
    expect(laidOut.analysis?.ctx.lookback.read).toBeDefined();
    const facts = { messageId: 'msg_2', usage: usage(400), missReason: undefined, error: undefined };
    const held = recordOf(c, {
      ...exchanged(c),
      seq: 2,
      sentAt: 1_100,
      request,
      laidOut,
      facts,
      passage: { outcome: 'held', heldMs: 50, claimed: [] },
    });
    expect(held).toMatchObject({ warm: 'held', heldMs: 50 });
    expect(held.savedUsd.warmFirst).toBeGreaterThan(0);
    expect(held.savedUsd.stripBilling).toBe(0);
    expect(held.diagnosis?.predictedReadTokens).toBeGreaterThan(0);
    // went at once ('free'): nothing to credit
    const free = recordOf(c, {
      ...exchanged(c),
      seq: 2,
      sentAt: 1_100,
      request,
      laidOut,
      facts,
      passage: { outcome: 'free', heldMs: 0, claimed: [] },
    });
    expect(free.warm).toBeUndefined();
    expect(free.savedUsd.warmFirst).toBe(0);
  });
});
