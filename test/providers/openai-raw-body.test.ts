import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createChatClient } from '../../src/providers/openai/client.ts';
import { PROVIDERS } from '../../src/providers/registry.ts';
import { streamChatBytes } from '../../src/providers/openai/stream.ts';

/** A 127.0.0.1 server that records each request's exact bytes and answers one SSE completion. */
let server: Server;
let baseURL = '';
const received: { path: string; headers: IncomingMessage['headers']; bytes: Buffer }[] = [];

const CHUNKS = [
  {
    id: 'c1',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'm',
    choices: [{ index: 0, delta: { role: 'assistant', content: 'he' }, finish_reason: null }],
  },
  {
    id: 'c1',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'm',
    choices: [{ index: 0, delta: { content: 'llo' }, finish_reason: null }],
  },
  {
    id: 'c1',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'm',
    choices: [
      {
        index: 0,
        delta: {
          tool_calls: [
            { index: 0, id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '{"pa' } },
          ],
        },
        finish_reason: null,
      },
    ],
  },
  {
    id: 'c1',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'm',
    choices: [
      {
        index: 0,
        delta: { tool_calls: [{ index: 0, function: { arguments: 'th":"a.ts"}' } }] },
        finish_reason: 'tool_calls',
      },
    ],
  },
  {
    id: 'c1',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'm',
    choices: [],
    usage: { prompt_tokens: 3000, completion_tokens: 7, prompt_tokens_details: { cached_tokens: 2944 } },
  },
];

beforeAll(async () => {
  server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (d: Buffer) => parts.push(d));
    req.on('end', () => {
      received.push({ path: req.url ?? '', headers: req.headers, bytes: Buffer.concat(parts) });
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const chunk of CHUNKS) res.write(`data: ${JSON.stringify(chunk)}\n\n`);
      res.end('data: [DONE]\n\n');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

describe('the openai client with a raw body', () => {
  it('sends a Uint8Array body byte for byte (no re-serialization) and the stream assembles to the neutral message', async () => {
    // not what JSON.stringify would write: spaces, a key order of our own, an escaped slash, a non-ASCII character
    const text =
      '{"model":"m", "messages":[{"role":"user","content":"caf\u00e9 \\/ x"}],"stream":true , "stream_options":{"include_usage":true}}';
    const body = new TextEncoder().encode(text);
    const client = createChatClient({ provider: PROVIDERS.dashscope, baseURL, apiKey: 'k', maxRetries: 0 });
    let started = 0;
    const sent = await streamChatBytes(client, body, { onStart: () => started++ });
    const last = received.at(-1)!;
    expect(last.path).toBe('/v1/chat/completions');
    expect(Buffer.compare(last.bytes, Buffer.from(body))).toBe(0);
    expect(last.headers['content-type']).toBe('application/json');
    // DashScope's cache header, as Qwen Code sends it
    expect(last.headers['x-dashscope-cachecontrol']).toBe('enable');
    expect(started).toBe(1);
    expect(sent.message.content).toEqual([
      { type: 'text', text: 'hello', citations: null },
      { type: 'tool_use', id: 'call_1', name: 'read_file', input: { path: 'a.ts' } },
    ]);
    expect(sent.message.stop_reason).toBe('tool_use');
    expect(sent.message.usage).toEqual({
      input_tokens: 56,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 2944,
      output_tokens: 7,
    });
  });
});
