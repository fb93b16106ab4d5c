import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureSnapshot } from '../../../src/core/fork/snapshot.ts';
import { childRequestBody } from '../../../src/core/prefix/body.ts';
import { assertStartsWithHead, driftCheckedFetch, firstDifference } from '../../../src/core/prefix/drift.ts';
import { freeze } from '../../../src/core/prefix/freeze.ts';
import { fixture } from '../../helpers.ts';

const bytes = (s: string) => new TextEncoder().encode(s);

describe('firstDifference / assertStartsWithHead', () => {
  it('finds the first differing byte, or -1 when the body starts with the head', () => {
    expect(firstDifference(bytes('abcdef'), bytes('abc'))).toBe(-1);
    expect(firstDifference(bytes('abXdef'), bytes('abc'))).toBe(2);
    expect(firstDifference(bytes('ab'), bytes('abc'))).toBe(2);
  });

  it('throws FORK_PREFIX_DRIFT with the offset and both sides', () => {
    const err = (() => {
      try {
        assertStartsWithHead(bytes('{"model":"b"}'), bytes('{"model":"a"'), 'p1');
      } catch (e) {
        return e as { code: string; data: Record<string, unknown> };
      }
      throw new Error('no drift detected');
    })();
    expect(err.code).toBe('FORK_PREFIX_DRIFT');
    expect(err.data).toMatchObject({ prefixId: 'p1', offset: 10, expected: '{"model":"a"', actual: '{"model":"b"}' });
  });
});

describe('driftCheckedFetch through the real SDK', () => {
  let server: Server;
  let url: string;
  const received: Buffer[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push(Buffer.concat(chunks));
        res.setHeader('content-type', 'application/json');
        res.end(
          JSON.stringify({
            id: 'msg_1',
            type: 'message',
            role: 'assistant',
            model: 'claude-opus-5-5',
            content: [],
            stop_reason: 'end_turn',
            stop_sequence: null,
            usage: { input_tokens: 1, output_tokens: 0 },
          }),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('passes a body that starts with the head through untouched, and stops one that drifted before it leaves', async () => {
    const prefix = freeze(captureSnapshot(fixture('parent-request.json')));
    const drifts: string[] = [];
    const client = new Anthropic({
      apiKey: 'test-key',
      baseURL: url,
      maxRetries: 0,
      fetch: driftCheckedFetch({ head: prefix.head, prefixId: prefix.id, onDrift: (e) => drifts.push(e.code) }),
    });
    const body = childRequestBody(prefix, prefix.child('read a.ts and report'), { max_tokens: 100 });
    await client.post('/v1/messages', { body, headers: { 'content-type': 'application/json' } });
    expect(received).toHaveLength(1);
    expect(received[0]!.equals(Buffer.from(body))).toBe(true);

    const drifted = Uint8Array.from(body);
    drifted[prefix.byteLength - 5]! ^= 0x20; // one byte inside the head
    const failure = await client
      .post('/v1/messages', { body: drifted, headers: { 'content-type': 'application/json' } })
      .catch((e: unknown) => e as Error & { cause?: { code?: string } });
    expect((failure as Error & { cause?: { code?: string } }).cause?.code).toBe('FORK_PREFIX_DRIFT');
    expect(drifts).toEqual(['FORK_PREFIX_DRIFT']);
    expect(received).toHaveLength(1); // nothing reached the server

    // a re-serialized object body is refused too: it was not sent from the frozen bytes
    await expect(
      client.messages.create({ model: 'claude-opus-5-5', max_tokens: 1, messages: [{ role: 'user', content: 'x' }] }),
    ).rejects.toThrow();
    expect(received).toHaveLength(1);
  });
});
