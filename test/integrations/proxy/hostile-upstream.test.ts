import Anthropic from '@anthropic-ai/sdk';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/util/clock.ts';
import { proxy, sdk, until } from './helpers.ts';
import { raw, rawUpstream, type Behaviour, type RawUpstream } from './raw-upstream.ts';

/*
 * An upstream that breaks every rule (a raw TCP server writing what the test says), the real
 * SDK as the client: each failure before the response begins is the proxy's own 502/504 in the
 * API's error shape, recorded with its reason; the proxy lives on and the next request through
 * it succeeds. (Before: status 000 or 099 threw ERR_HTTP_INVALID_STATUS_CODE out of an event
 * callback and killed the proxy process.)
 */

const upstreams: RawUpstream[] = [];
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(upstreams.splice(0).map((u) => u.close()));
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const params = {
  model: 'claude-opus-5-5',
  max_tokens: 16,
  messages: [{ role: 'user' as const, content: 'hi' }],
};
const status = (code: string, rest = 'content-length: 0\r\n\r\n') => raw(`HTTP/1.1 ${code} Whatever\r\n${rest}`);

async function through(behaviour: Behaviour, options: Parameters<typeof proxy>[0] = {}) {
  const upstream = await rawUpstream([behaviour]);
  upstreams.push(upstream);
  const logDir = mkdtempSync(join(tmpdir(), 'fc-hostile-'));
  dirs.push(logDir);
  const px = await proxy({ upstream: upstream.url, logDir, ...options });
  return { px, upstream, client: sdk(px.url), log: () => readFileSync(join(logDir, 'exchanges.jsonl'), 'utf8') };
}

const cases: [string, Behaviour, number, RegExp][] = [
  ['status 000', status('000'), 502, /upstream sent an invalid status 0\b/],
  ['status 099', status('099'), 502, /upstream sent an invalid status 99\b/],
  ['status 600', status('600'), 502, /upstream sent an invalid status 600\b/],
  ['status 999', status('999'), 502, /upstream sent an invalid status 999\b/],
  ['a connection reset before any byte', (s) => s.resetAndDestroy(), 502, /upstream: ECONNRESET/],
  ['a close before any byte', (s) => s.end(), 502, /upstream: (ECONNRESET|socket hang up)/],
  ['garbage instead of HTTP', raw('garbage\r\n\r\n'), 502, /upstream: HPE_\w+ \(not a valid HTTP response\)/],
  ['binary noise', raw('\u0000\u00ff\u0007\u001b[2J\r\n\r\n'), 502, /not a valid HTTP response/],
  ['a header line that is not one', status('200', 'no colon here\r\n\r\n'), 502, /not a valid HTTP response/],
];

describe('the proxy survives any upstream', () => {
  for (const [name, behaviour, expected, reason] of cases) {
    it(`${name} → ${expected} to that client, recorded with its reason; the next request succeeds`, async () => {
      const { px, client, log } = await through(behaviour);
      const err = (await client.messages.create(params).catch((e: unknown) => e)) as InstanceType<
        typeof Anthropic.APIError
      >;
      expect(err).toBeInstanceOf(Anthropic.APIError);
      expect(err.status).toBe(expected);
      expect(err.message).toMatch(reason);
      expect(err.headers?.get('x-forkcache-proxy-error')).toBe('true');
      // The same proxy, the same upstream (now answering normally): the next request goes through.
      const ok = await client.messages.create(params);
      expect(ok.content).toEqual([{ type: 'text', text: 'fine' }]);
      await until(() => px.ledger.records().length === 2, 'both exchanges recorded');
      const [failed, fine] = px.ledger.records();
      expect(failed).toMatchObject({ status: expected, error: expect.stringMatching(reason) });
      expect(fine).toMatchObject({ status: 200, error: undefined });
      expect(px.summary().requests).toMatchObject({ total: 2, errors: 1 });
      const lines = log()
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { type: string; seq: number; status?: number; record?: { error?: string } });
      expect(lines.find((l) => l.type === 'response' && l.seq === failed!.seq)).toMatchObject({
        status: expected,
        record: { error: expect.stringMatching(reason) },
      });
    });
  }

  it('the SDK retries the proxy 502 by itself and gets the answer', async () => {
    const { px, upstream } = await through(status('000'));
    const client = new Anthropic({ apiKey: 'sk-ant-test', baseURL: px.url, maxRetries: 2 });
    const ok = await client.messages.create(params);
    expect(ok.id).toBe('msg_normal');
    expect(upstream.requests).toBe(2);
  });

  // The silence is measured on the proxy's clock: once the upstream has had its say, the test
  // moves that clock past the timeout, so a loaded machine's slow answer to the next request is
  // never taken for silence.
  const silentFor = async (clock: ManualClock, settled: () => boolean): Promise<void> =>
    until(() => {
      if (clock.pending > 0) clock.advance(300);
      return settled();
    }, 'the silence noticed');

  it('an upstream that never answers → 504 after upstreamTimeoutMs; the proxy goes on', async () => {
    const clock = new ManualClock();
    const { px, upstream, client } = await through(() => undefined, { upstreamTimeoutMs: 300, clock });
    let settled = false;
    const answer = client.messages.create(params).then(
      () => ((settled = true), undefined),
      (e: unknown) => ((settled = true), e as { status?: number; message: string }),
    );
    await until(() => upstream.requests === 1, 'the request upstream');
    await silentFor(clock, () => settled);
    const err = await answer;
    expect(err?.status).toBe(504);
    expect(err?.message).toMatch(/upstream sent nothing for 300 ms \(no response\)/);
    expect((await client.messages.create(params)).id).toBe('msg_normal');
    await until(() => px.ledger.records().length === 2, 'recorded');
    expect(px.ledger.records()[0]).toMatchObject({ status: 504, error: expect.stringMatching(/no response/) });
  });

  it('an upstream that goes silent mid-stream: the client stream is cut after the timeout, the exchange recorded', async () => {
    const start =
      'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_s","type":"message","role":"assistant","model":"claude-opus-5-5","content":[],"usage":{"input_tokens":4,"cache_creation_input_tokens":0,"cache_read_input_tokens":2,"output_tokens":1}}}\n\n';
    const clock = new ManualClock();
    const { px, client } = await through(
      (s) =>
        s.write(
          `HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n${start.length.toString(16)}\r\n${start}\r\n`,
        ),
      { upstreamTimeoutMs: 300, clock },
    );
    const stream = client.messages.stream(params);
    let settled = false;
    const answer = stream.finalMessage().then(
      () => ((settled = true), undefined),
      (e: unknown) => ((settled = true), e),
    );
    // message_start came through the proxy: what is left is the silence
    await Promise.race([new Promise((resolve) => stream.once('streamEvent', resolve)), answer]);
    await silentFor(clock, () => settled);
    expect(await answer).toBeInstanceOf(Error);
    await until(() => px.ledger.records().length === 1, 'recorded');
    expect(px.ledger.records()[0]).toMatchObject({
      status: 200,
      usage: { input_tokens: 4, cache_read_input_tokens: 2 },
      error: expect.stringMatching(/upstream sent nothing for 300 ms \(mid-response\)/),
    });
    expect((await client.messages.create(params)).id).toBe('msg_normal');
  });

  it('garbage in the middle of a chunked body: the client connection is cut, the exchange recorded', async () => {
    const { px, client } = await through(
      raw(
        'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n2\r\n{"\r\nzz-not-a-size\r\n',
      ),
    );
    await expect(client.messages.create(params)).rejects.toThrow();
    await until(() => px.ledger.records().length === 1, 'recorded');
    expect(px.ledger.records()[0]).toMatchObject({
      status: 200,
      error: 'upstream cut the response (HPE_INVALID_CHUNK_SIZE)',
    });
    expect((await client.messages.create(params)).id).toBe('msg_normal');
  });
});
