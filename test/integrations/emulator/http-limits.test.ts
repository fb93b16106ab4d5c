import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/util/clock.ts';
import { LATENCY_PROFILES } from '../../../src/integrations/emulator/latency.ts';
import { slowClients } from '../proxy/slow-clients.ts';
import { emulator, MODEL } from './helpers.ts';

// Issue 15, case 8 (emulator, HTTP level): deep nesting answered 500 (which the SDK retries),
// a 32 MiB body was buffered before the key was checked, and connections had no cap.

function post(
  url: string,
  headers: Record<string, string>,
  body: string | { declared: number; sent: string },
): Promise<{ status: number; json: any }> {
  return new Promise((resolve, reject) => {
    const partial = typeof body !== 'string';
    const req = request(`${url}/v1/messages`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'anthropic-version': '2023-06-01',
        'content-length': String(partial ? body.declared : Buffer.byteLength(body)),
        ...headers,
      },
    });
    req.on('response', (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d));
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) });
        req.destroy();
      });
    });
    req.on('error', (err) => ((err as { code?: string }).code === 'ECONNRESET' ? undefined : reject(err)));
    // a partial body: the rest is never sent, so only an answer given before reading it arrives
    req.write(partial ? body.sent : body);
    if (!partial) req.end();
  });
}

describe('emulator HTTP limits (issue 15, case 8)', () => {
  it('answers 5,000-deep nesting with a 400 naming the path, not a 500', async () => {
    const emu = await emulator();
    // written as text: building it as an object and stringifying would overflow here first
    const schema = `${'{"type":"object","properties":{"a":'.repeat(5000)}{"type":"string"}${'}}'.repeat(5000)}`;
    const body = `{"model":"${MODEL}","max_tokens":10,"messages":[{"role":"user","content":"hi"}],"tools":[{"name":"t","input_schema":${schema}}]}`;
    const res = await post(emu.url, { 'x-api-key': 'k' }, body);
    expect(res.status).toBe(400);
    expect(res.json.error.type).toBe('invalid_request_error');
    expect(res.json.error.message).toMatch(
      /^tools\[0\]\.input_schema\.properties\.a.*: nested deeper than 256 levels$/,
    );
  });

  it('refuses a missing key before reading the body (answers with 32 MiB declared and 1 KiB sent)', async () => {
    const emu = await emulator({ apiKey: 'right' });
    const res = await post(emu.url, { 'x-api-key': 'wrong' }, { declared: 32 * 1024 * 1024, sent: 'x'.repeat(1024) });
    expect(res.status).toBe(401);
    expect(res.json.error.type).toBe('authentication_error');
  });

  it('closes connections beyond maxConnections', async () => {
    const emu = await emulator({ maxConnections: 3 });
    const { port } = new URL(emu.url);
    const sockets: Socket[] = [];
    const closedByServer: number[] = [];
    for (let i = 0; i < 6; i++) {
      const socket = connect(Number(port), '127.0.0.1');
      await new Promise((resolve) => socket.once('connect', resolve));
      socket.on('close', () => closedByServer.push(i));
      socket.on('error', () => {});
      sockets.push(socket);
    }
    // a served connection answers a request; the refused ones are closed without one
    const answered = await new Promise<string>((resolve) => {
      sockets[0]!.once('data', (d: Buffer) => resolve(d.toString()));
      sockets[0]!.write(`GET /v1/models HTTP/1.1\r\nhost: x\r\nx-api-key: k\r\nanthropic-version: 2023-06-01\r\n\r\n`);
    });
    expect(answered).toMatch(/^HTTP\/1\.1 200/);
    for (const i of [3, 4, 5])
      if (!closedByServer.includes(i)) await new Promise((resolve) => sockets[i]!.once('close', resolve));
    expect(closedByServer.sort()).toEqual([3, 4, 5]);
    for (const s of sockets) s.destroy();
  });

  it('bodies in flight over maxInFlightBodyBytes → the API overload error (529), and the share comes back when a request ends', async () => {
    const clock = new ManualClock();
    // a 1 s time to first token on a manual clock: the first request stays in flight until the test moves time
    const emu = await emulator({
      clock,
      latency: { ...LATENCY_PROFILES.off, baseMs: 1_000 },
      maxInFlightBodyBytes: 600,
    });
    const started = new Promise((resolve) => emu.on('request-start', resolve));
    const body = (pad: number) =>
      `{"model":"${MODEL}","max_tokens":5,"messages":[{"role":"user","content":"${'p'.repeat(pad)}"}]}`;
    const first = post(emu.url, { 'x-api-key': 'k' }, body(300));
    await started;
    const refused = await post(emu.url, { 'x-api-key': 'k' }, body(300));
    expect(refused.status).toBe(529);
    expect(refused.json.error).toEqual({
      type: 'overloaded_error',
      message: 'Overloaded: request bodies in flight would pass 600 bytes; retry shortly.',
    });
    clock.advance(1_000);
    expect((await first).status).toBe(200);
    const again = post(emu.url, { 'x-api-key': 'k' }, body(300));
    await new Promise((resolve) => emu.on('request-start', resolve));
    clock.advance(1_000);
    expect((await again).status).toBe(200);
  });

  it('1,000 slowloris connections are all closed at the headers timeout; a request then goes through', async () => {
    const emu = await emulator({ headersTimeoutMs: 200, requestTimeoutMs: 400, timeoutCheckMs: 50 });
    const clients = await slowClients(Number(new URL(emu.url).port), 1_000, 'POST /v1/messages HTTP/1.1\r\nX-A: ');
    await Promise.all(clients.map((c) => c.closed));
    expect(clients.every((c) => c.got === '' || c.got.startsWith('HTTP/1.1 408'))).toBe(true);
    const res = await post(
      emu.url,
      { 'x-api-key': 'k' },
      `{"model":"${MODEL}","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`,
    );
    expect(res.status).toBe(200);
  }); // 1,000 real sockets: a backstop for a loaded machine
});
