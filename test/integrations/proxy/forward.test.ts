import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ExchangeStart } from '../../../src/integrations/proxy/core.ts';
import { proxy, until } from './helpers.ts';

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    s.close();
  }
});

/** A stand-in upstream whose answers the test writes by hand. */
async function stub(handler: (req: IncomingMessage, body: Buffer, res: ServerResponse) => void): Promise<string> {
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    handler(req, Buffer.concat(chunks), res);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  servers.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const SSE = [
  'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-opus-5-5","content":[],"usage":{"input_tokens":5,"cache_creation_input_tokens":7,"cache_read_input_tokens":11,"output_tokens":1}}}\n\n',
  'event: ping\ndata: {"type": "ping"}\n\n',
  'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n',
  'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"h\u00e9llo"}}\n\n',
  'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":9}}\n\n',
  'event: message_stop\ndata: {"type":"message_stop"}\n\n',
].join('');

describe('forwarding', () => {
  it('passes the request bytes and headers through and streams the response back unchanged, however it is chunked', async () => {
    let seen: { body: Buffer; headers: IncomingMessage['headers']; url: string | undefined } | undefined;
    const bytes = Buffer.from(SSE);
    const upstream = await stub((req, body, res) => {
      seen = { body, headers: req.headers, url: req.url };
      res.sendDate = false; // so that a Date the client sees could only come from the proxy
      res.writeHead(200, 'OK', { 'Content-Type': 'text/event-stream', 'request-id': 'req_42', 'X-Custom': 'kept' });
      // Split inside a frame and inside a multi-byte character.
      const cut = [17, bytes.indexOf('h\u00e9') + 2, bytes.length - 3];
      let at = 0;
      for (const end of cut) {
        res.write(bytes.subarray(at, end));
        at = end;
      }
      res.end(bytes.subarray(at));
    });
    const px = await proxy({ upstream: `${upstream}/base/` });
    const sent = Buffer.from(
      '{"model":"claude-opus-5-5","max_tokens":9,  "stream":true,"messages":[{"role":"user","content":"hi"}]}',
    );
    const response = await fetch(`${px.url}/v1/messages?beta=true`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: 'Bearer sk-ant-secret-0123456789',
        'anthropic-version': '2026-10-21',
      },
      body: sent,
    });
    const received = Buffer.from(await response.arrayBuffer());
    expect(received.equals(bytes)).toBe(true);
    expect(response.status).toBe(200);
    expect(response.headers.get('request-id')).toBe('req_42');
    expect(response.headers.get('x-custom')).toBe('kept');
    expect(response.headers.get('date')).toBeNull();
    expect(seen!.url).toBe('/base/v1/messages?beta=true');
    expect(seen!.body.equals(sent)).toBe(true);
    expect(seen!.headers['authorization']).toBe('Bearer sk-ant-secret-0123456789');
    await until(() => px.ledger.records().length === 1, 'recorded');
    const [record] = px.ledger.records();
    expect(record!.usage).toMatchObject({
      input_tokens: 5,
      cache_creation_input_tokens: 7,
      cache_read_input_tokens: 11,
      output_tokens: 9,
    });
    expect(record!.requestId).toBe('req_42');
    expect(record!.ttfbMs).toBeGreaterThanOrEqual(0);
  });

  it('passes upstream errors through as the client would have seen them', async () => {
    const error = '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_9"}';
    const upstream = await stub((_req, _body, res) =>
      res
        .writeHead(529, { 'content-type': 'application/json', 'retry-after': '3', 'x-should-retry': 'true' })
        .end(error),
    );
    const px = await proxy({ upstream });
    const response = await fetch(`${px.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(response.status).toBe(529);
    expect(response.headers.get('retry-after')).toBe('3');
    expect(response.headers.get('x-should-retry')).toBe('true');
    expect(await response.text()).toBe(error);
    await until(() => px.ledger.records().length === 1, 'recorded');
    expect(px.ledger.records()[0]!.error).toBe('overloaded_error: Overloaded');
  });

  it('lays a request out while its answer is still streaming: a long stream does not hold its analysis back', async () => {
    const split = SSE.indexOf('event: ping');
    let release: (() => void) | undefined;
    const upstream = await stub((_req, _body, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' }).write(SSE.slice(0, split));
      release = () => res.end(SSE.slice(split));
    });
    const px = await proxy({ upstream });
    const started = new Promise<ExchangeStart>((resolve) => px.on('exchange-start', resolve));
    const response = await fetch(`${px.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"model":"claude-opus-5-5","max_tokens":9,"stream":true,"messages":[{"role":"user","content":"hi"}]}',
    });
    expect((await started).model).toBe('claude-opus-5-5');
    expect(px.inFlight).toBe(1); // still streaming
    release!();
    expect(await response.text()).toBe(SSE);
    await until(() => px.ledger.records().length === 1, 'recorded');
    expect(px.ledger.records()[0]!.usage?.output_tokens).toBe(9);
  });

  it('an upstream it cannot reach is a 502 for the client (the SDK retries it), recorded with the reason', async () => {
    const upstream = await stub(() => undefined);
    servers[0]!.close();
    await once(servers[0]!, 'close');
    const px = await proxy({ upstream });
    const response = await fetch(`${px.url}/v1/messages`, { method: 'POST', body: '{}' });
    expect(response.status).toBe(502);
    expect(await response.json()).toEqual({
      type: 'error',
      error: { type: 'api_error', message: 'forkcache proxy: upstream: ECONNREFUSED' },
    });
    await until(() => px.ledger.records().length === 1, 'recorded');
    expect(px.ledger.records()[0]).toMatchObject({ status: 502, error: 'upstream: ECONNREFUSED' });
  });

  it('a client that goes away mid-stream cancels the upstream request', async () => {
    let upstreamClosed = false;
    const upstream = await stub((req, _body, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(SSE.split('\n\n')[0] + '\n\n');
      res.on('close', () => (upstreamClosed = true));
    });
    const px = await proxy({ upstream });
    const target = new URL(px.url);
    const req = request({ host: target.hostname, port: target.port, path: '/v1/messages', method: 'POST' });
    req.end('{}');
    const [res] = (await once(req, 'response')) as [IncomingMessage];
    await once(res, 'data');
    req.destroy();
    await until(() => upstreamClosed, 'the upstream request closed');
    await until(() => px.ledger.records().length === 1, 'recorded');
    expect(px.ledger.records()[0]!.error).toBe('client closed the connection');
  });

  it('a client that leaves in the middle of its body is dropped: nothing is sent, nothing hangs', async () => {
    let upstreamCalls = 0;
    const upstream = await stub(() => upstreamCalls++);
    const px = await proxy({ upstream });
    const target = new URL(px.url);
    const req = request({
      host: target.hostname,
      port: target.port,
      path: '/v1/messages',
      method: 'POST',
      headers: { 'content-length': '1000' },
    });
    req.on('error', () => undefined);
    await new Promise<void>((resolve) => req.write('{"model":', () => resolve()));
    req.destroy();
    await px.destroy(); // waits for every exchange: it would never return if this one hung
    expect(upstreamCalls).toBe(0);
    expect(px.ledger.records()).toHaveLength(0);
  });

  it('--log-dir appends every exchange with the keys masked', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'proxy-log-'));
    try {
      const upstream = await stub((_req, _body, res) =>
        res.writeHead(200, { 'content-type': 'text/event-stream' }).end(SSE),
      );
      const px = await proxy({ upstream, logDir: dir });
      for (let i = 0; i < 2; i++) {
        const response = await fetch(`${px.url}/v1/messages`, {
          method: 'POST',
          headers: { 'x-api-key': 'sk-ant-api03-verysecretvalue-WXYZ', 'content-type': 'application/json' },
          body: `{"n":${i}}`,
        });
        await response.text();
      }
      await until(() => px.ledger.records().length === 2, 'recorded');
      const text = readFileSync(join(dir, 'exchanges.jsonl'), 'utf8');
      expect(text).not.toContain('verysecret');
      const lines = text
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(lines.map((l) => `${String(l['type'])}${String(l['seq'])}`)).toEqual([
        'request1',
        'response1',
        'request2',
        'response2',
      ]);
      expect((lines[0]!['headers'] as Record<string, string>)['x-api-key']).toBe('****WXYZ');
      expect(lines[1]!['body']).toBe(SSE);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('compressed responses', () => {
  it('passes gzip bytes through unchanged and still reads the usage', async () => {
    const { gzipSync } = await import('node:zlib');
    const message = {
      id: 'msg_z',
      type: 'message',
      role: 'assistant',
      model: 'claude-opus-5-5',
      content: [{ type: 'text', text: 'hi' }],
      usage: { input_tokens: 3, cache_creation_input_tokens: 0, cache_read_input_tokens: 40, output_tokens: 2 },
    };
    const zipped = gzipSync(JSON.stringify(message));
    const upstream = await stub((_req, _body, res) =>
      res
        .writeHead(200, {
          'content-type': 'application/json',
          'content-encoding': 'gzip',
          'content-length': zipped.length,
        })
        .end(zipped),
    );
    const px = await proxy({ upstream });
    const target = new URL(px.url);
    const req = request({
      host: target.hostname,
      port: target.port,
      path: '/v1/messages',
      method: 'POST',
      headers: { 'accept-encoding': 'gzip' },
    });
    req.end('{"model":"claude-opus-5-5","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}');
    const [res] = (await once(req, 'response')) as [IncomingMessage];
    const chunks: Buffer[] = [];
    for await (const chunk of res) chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks).equals(zipped)).toBe(true);
    expect(res.headers['content-encoding']).toBe('gzip');
    await until(() => px.ledger.records().length === 1, 'recorded');
    expect(px.ledger.records()[0]!.usage).toMatchObject({ cache_read_input_tokens: 40, output_tokens: 2 });
    expect(px.ledger.records()[0]!.messageId).toBe('msg_z');
  });
});

describe('backpressure', () => {
  it('a client that stops reading stops the upstream, instead of the proxy buffering the stream', async () => {
    const chunk = Buffer.alloc(64 * 1024, 'x');
    const total = 2048; // chunks: 128 MiB, far more than the sockets between them can hold
    const upstreamState = { written: 0, done: false };
    const upstream = await stub(async (_req, _body, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (let i = 0; i < total; i++) {
        upstreamState.written++;
        if (!res.write(chunk)) await once(res, 'drain');
      }
      res.end();
      upstreamState.done = true;
    });
    const px = await proxy({ upstream });
    const target = new URL(px.url);
    const req = request({ host: target.hostname, port: target.port, path: '/v1/other', method: 'POST' });
    req.end('{}');
    const [res] = (await once(req, 'response')) as [IncomingMessage];
    res.pause();
    // Give the event loop many turns (not time): without backpressure the proxy would read the
    // whole stream into memory in far fewer; with it, the upstream stays blocked on 'drain'.
    for (let i = 0; i < 3000; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(upstreamState.done).toBe(false);
    expect(upstreamState.written).toBeLessThan(total / 2);
    let received = 0;
    res.on('data', (c: Buffer) => (received += c.length));
    res.resume();
    await once(res, 'end');
    expect(received).toBe(total * chunk.length);
    expect(upstreamState.done).toBe(true);
  });
});
