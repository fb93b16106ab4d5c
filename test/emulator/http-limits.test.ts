import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
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
});
