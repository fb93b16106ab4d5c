import { request } from 'node:http';
import type { Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { proxy, until } from './helpers.ts';
import { normal, rawUpstream, type RawUpstream } from './raw-upstream.ts';
import { slowClients } from './slow-clients.ts';

/*
 * Bounded resources, with real sockets (no sleeps: the timeouts are injected small and the test
 * waits for each socket's close event). Before: each body was buffered up to 32 MiB with no cap
 * on their sum (12 concurrent 31 MiB bodies: RSS 247 → 1,016 MB), no connection cap, and
 * headers/request timeouts were 0, so 4,000 slowloris connections were all held forever.
 */

const upstreams: RawUpstream[] = [];
afterEach(async () => {
  await Promise.all(upstreams.splice(0).map((u) => u.close()));
});

/** POST `size` bytes of a JSON body (declared, or chunked without a length) and read the answer. */
function post(
  url: string,
  size: number,
  chunked = false,
): Promise<{ status: number; text: string; headers: Record<string, unknown> }> {
  const body = `{"model":"claude-opus-5-5","pad":"${'x'.repeat(Math.max(0, size - 36))}"}`;
  return new Promise((resolve, reject) => {
    const req = request(`${url}/v1/messages`, {
      method: 'POST',
      headers: chunked ? { 'content-type': 'application/json' } : { 'content-length': String(Buffer.byteLength(body)) },
    });
    req.on('response', (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, text, headers: res.headers }));
    });
    req.on('error', reject);
    if (chunked) {
      req.write(body.slice(0, 100));
      req.end(body.slice(100));
    } else req.end(body);
  });
}

describe('proxy resource limits', () => {
  it('one body over maxBodyBytes → 413; bodies in flight over maxInFlightBodyBytes → 503; both recorded, nothing sent upstream', async () => {
    const held: Socket[] = [];
    const upstream = await rawUpstream([(s) => held.push(s)]);
    upstreams.push(upstream);
    const px = await proxy({ upstream: upstream.url, maxBodyBytes: 2_000, maxInFlightBodyBytes: 3_000 });
    const first = post(px.url, 1_500); // held by the upstream: its 1,500 bytes stay in flight
    await until(() => held.length === 1, 'the first request reached the upstream');
    const overloaded = await post(px.url, 1_600);
    expect(overloaded.status).toBe(503);
    expect(overloaded.headers['retry-after']).toBe('1');
    expect(JSON.parse(overloaded.text).error).toEqual({
      type: 'overloaded_error',
      message: 'forkcache proxy: request bodies in flight would pass 3000 bytes; retry shortly',
    });
    // the same without a declared length: counted as it streams in
    expect((await post(px.url, 1_600, true)).status).toBe(503);
    const large = await post(px.url, 2_500);
    expect(large.status).toBe(413);
    expect(JSON.parse(large.text).error.type).toBe('request_too_large');
    expect((await post(px.url, 2_500, true)).status).toBe(413);
    expect(upstream.requests).toBe(1);
    normal(held[0]!);
    expect((await first).status).toBe(200);
    // the first body's share is given back: the same request now fits
    expect((await post(px.url, 1_600)).status).toBe(200);
    await until(() => px.ledger.records().length === 6, 'all recorded');
    expect(px.ledger.records().map((r) => r.status)).toEqual([200, 503, 503, 413, 413, 200]);
    expect(px.summary().requests).toMatchObject({ total: 6, errors: 4 });
  });

  it('4,000 slowloris connections are all closed by the proxy (408 at the headers timeout, or dropped past maxConnections); then a request goes through', async () => {
    const upstream = await rawUpstream([]);
    upstreams.push(upstream);
    const px = await proxy({
      upstream: upstream.url,
      headersTimeoutMs: 200,
      requestTimeoutMs: 400,
      timeoutCheckMs: 50,
    });
    const clients = await slowClients(px.port, 4_000, 'POST /v1/messages HTTP/1.1\r\nHost: x\r\nX-Slow: ');
    // every one closes on its own (the client never closes it): none is held forever
    await Promise.all(clients.map((c) => c.closed));
    const timedOut = clients.filter((c) => c.got.startsWith('HTTP/1.1 408')).length;
    const dropped = clients.filter((c) => c.got === '').length;
    expect(timedOut + dropped).toBe(4_000);
    expect(timedOut).toBeGreaterThan(0);
    expect((await post(px.url, 100)).status).toBe(200);
  }); // 4,000 real sockets: a backstop for a loaded machine

  it('connections past maxConnections are closed at once; the ones within are served', async () => {
    const upstream = await rawUpstream([]);
    upstreams.push(upstream);
    const px = await proxy({ upstream: upstream.url, maxConnections: 3 });
    const clients = await slowClients(px.port, 6, '');
    await Promise.all(clients.slice(3).map((c) => c.closed));
    expect(clients.slice(3).map((c) => c.got)).toEqual(['', '', '']);
    const [first] = clients;
    const answered = new Promise<void>((resolve) =>
      first!.socket.on('data', () => first!.got.includes('fine') && resolve()),
    );
    first!.socket.write('POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}');
    await answered;
    expect(first!.got).toMatch(/^HTTP\/1\.1 200/);
    for (const c of clients) c.socket.destroy();
  });

  it('a body that dribbles in is cut at the request timeout; a request already in, held upstream, is not', async () => {
    const held: Socket[] = [];
    const upstream = await rawUpstream([(s) => held.push(s)]);
    upstreams.push(upstream);
    const px = await proxy({
      upstream: upstream.url,
      headersTimeoutMs: 100,
      requestTimeoutMs: 200,
      timeoutCheckMs: 20,
    });
    const waiting = post(px.url, 100);
    await until(() => held.length === 1, 'the first request reached the upstream');
    const [slow] = await slowClients(
      px.port,
      1,
      'POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{"a"',
    );
    await slow!.closed; // the request timeout has passed for it, and so for the one held upstream
    expect(slow!.got).toMatch(/^HTTP\/1\.1 408/);
    normal(held[0]!);
    expect((await waiting).status).toBe(200);
  });

  it('refuses timeouts that contradict each other, naming the option', async () => {
    await expect(proxy({ headersTimeoutMs: 5_000, requestTimeoutMs: 1_000 })).rejects.toThrow(
      /proxy options: headersTimeoutMs: must not exceed requestTimeoutMs/,
    );
  });
});
