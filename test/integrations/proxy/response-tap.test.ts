import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { FRAME_LIMIT, JSON_LIMIT, ResponseTap } from '../../../src/integrations/proxy/exchange/response-tap.ts';

/*
 * A gzip bomb from the upstream: 600 gzip members of 1 MiB of `a` each (about 600 KB on the
 * wire, 600 MiB inflated), with no SSE frame end. The proxy forwards the bytes untouched; its
 * tap reads a decompressed copy, and must stop decompressing once it gives up on the stream
 * (before: it went on inflating and rescanning for tens of seconds, 532 MB at its peak for a
 * 1.5 MB bomb). What it inflated is the measure: bounded by the limit it gives up at.
 */
const MIB = 1 << 20;
const member = gzipSync(Buffer.alloc(MIB, 0x61), { level: 9 });
const bomb = (): Buffer[] => Array.from({ length: 600 }, () => member);

async function tapped(contentType: string): Promise<ResponseTap> {
  let started = 0;
  const tap = new ResponseTap(contentType, 'gzip', () => (started += 1));
  for (const chunk of bomb()) tap.write(chunk);
  await tap.end();
  return tap;
}

describe('the response tap and a gzip bomb', () => {
  it('an SSE stream with no frame end: inflating stops once the frame limit is passed', async () => {
    expect(600 * member.length).toBeLessThan(MIB); // the bomb really is one: under 1 MiB on the wire
    const tap = await tapped('text/event-stream');
    expect(tap.inflatedBytes).toBeGreaterThan(FRAME_LIMIT);
    expect(tap.inflatedBytes).toBeLessThan(FRAME_LIMIT + 2 * MIB);
    expect(tap.facts.usage).toBeUndefined();
  });

  it('a JSON body: inflating stops at the JSON limit', async () => {
    const tap = await tapped('application/json');
    expect(tap.inflatedBytes).toBeLessThan(JSON_LIMIT + 2 * MIB);
  });

  it('an ordinary gzip stream is still read whole, frame by frame', async () => {
    const frames = [
      'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","usage":{"input_tokens":5}}}\n\n',
      `event: content_block_delta\ndata: {"type":"content_block_delta","delta":{"text":"${'x'.repeat(100_000)}"}}\n\n`,
      'event: message_delta\ndata: {"type":"message_delta","usage":{"output_tokens":7}}\n\n',
    ].join('');
    for (const encoding of ['gzip', undefined]) {
      const body = encoding ? gzipSync(Buffer.from(frames)) : Buffer.from(frames);
      const tap = new ResponseTap('text/event-stream', encoding, () => undefined);
      // in small pieces, so frame ends straddle chunk ends
      for (let i = 0; i < body.length; i += 7) tap.write(body.subarray(i, i + 7));
      await tap.end();
      expect(tap.facts.messageId, encoding).toBe('msg_1');
      expect(tap.facts.usage, encoding).toEqual({ input_tokens: 5, output_tokens: 7 });
    }
  });
});

describe('the response tap and OpenAI’s answers', () => {
  const usage = {
    input_tokens: 5_000,
    output_tokens: 12,
    input_tokens_details: {
      cached_tokens: 3_000,
      cache_write_tokens: 1_900,
      cache_write_tokens_details: { ttl_30m_tokens: 0, ttl_12h_tokens: 1_900 },
    },
  };
  const ledgerUsage = {
    input_tokens: 100,
    cache_creation_input_tokens: 1_900,
    cache_read_input_tokens: 3_000,
    output_tokens: 12,
    cache_creation: {
      ephemeral_5m_input_tokens: 0,
      ephemeral_1h_input_tokens: 0,
      ttl_30m_input_tokens: 0,
      ttl_12h_input_tokens: 1_900,
    },
  };

  it('a streamed Responses answer: started at response.created, its usage from response.completed, writes by TTL', async () => {
    const frames = [
      'event: response.created\ndata: {"type":"response.created","sequence_number":0,"response":{"id":"resp_1","usage":null}}\n\n',
      'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","sequence_number":1,"delta":"hi"}\n\n',
      `event: response.completed\ndata: ${JSON.stringify({ type: 'response.completed', sequence_number: 2, response: { id: 'resp_1', usage } })}\n\n`,
    ].join('');
    let started = 0;
    const tap = new ResponseTap('text/event-stream', undefined, () => (started += 1));
    tap.write(Buffer.from(frames));
    await tap.end();
    expect(started).toBe(1);
    expect(tap.facts.messageId).toBe('resp_1');
    expect(tap.facts.usage).toEqual(ledgerUsage);
  });

  it('a JSON Responses answer and a JSON Chat Completions answer', async () => {
    const response = new ResponseTap('application/json', undefined, () => undefined);
    response.write(Buffer.from(JSON.stringify({ id: 'resp_2', object: 'response', usage })));
    await response.end();
    expect(response.facts.usage).toEqual(ledgerUsage);
    const chat = new ResponseTap('application/json', undefined, () => undefined);
    chat.write(
      Buffer.from(
        JSON.stringify({
          id: 'chatcmpl-1',
          object: 'chat.completion',
          usage: { prompt_tokens: 5_000, completion_tokens: 12, prompt_tokens_details: { cached_tokens: 3_072 } },
        }),
      ),
    );
    await chat.end();
    expect(chat.facts.messageId).toBe('chatcmpl-1');
    expect(chat.facts.usage).toEqual({
      input_tokens: 1_928,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 3_072,
      output_tokens: 12,
    });
  });
});
