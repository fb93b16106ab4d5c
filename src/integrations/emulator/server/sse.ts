import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import type { Clock } from '../../../core/util/clock.ts';
import { outputMs, type LatencyProfile } from '../latency.ts';
import { cutAfter } from './http-util.ts';
import type { ResponseBlock, ResponseMessage } from '../types.ts';

/** One SSE frame. Every frame has an `event:` line: the SDK ignores frames without one. */
export function sseFrame(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** Text deltas of a few words each, as the API streams them. */
export function textChunks(text: string, wordsPerChunk = 4): string[] {
  const words = text.match(/\s*\S+\s*/g) ?? [text];
  const chunks: string[] = [];
  for (let i = 0; i < words.length; i += wordsPerChunk) chunks.push(words.slice(i, i + wordsPerChunk).join(''));
  return chunks.length > 0 ? chunks : [''];
}

/** `input_json_delta` pieces of a tool input's JSON. */
export function jsonChunks(json: string, size = 48): string[] {
  const chunks: string[] = [];
  for (let i = 0; i < json.length; i += size) chunks.push(json.slice(i, i + size));
  return chunks;
}

interface StreamOptions {
  clock: Clock;
  profile: LatencyProfile;
  signal: AbortSignal;
  blockTokens: readonly number[];
  /** Fail after the first delta with `event: error` (the `stream-error` fault). */
  failMidStream: boolean;
  /** Drop the connection after the first delta, with no `event: error` (the `cut` fault). */
  cutMidStream?: boolean | undefined;
  /** Output tokens as they are generated (the OTPM bucket counts them then). */
  onTokens?: ((tokens: number) => void) | undefined;
}

/** Write a frame; wait for `drain` when the socket is full, unless the client has left. */
async function write(res: ServerResponse, frame: string, signal?: AbortSignal): Promise<void> {
  if (!res.write(frame)) await once(res, 'drain', signal ? { signal } : {});
}

async function pace(options: StreamOptions, tokens: number): Promise<void> {
  const ms = outputMs(options.profile, tokens);
  if (ms > 0) await options.clock.sleep(ms, options.signal);
  options.onTokens?.(tokens);
}

function startBlock(block: ResponseBlock): Record<string, unknown> {
  if (block.type === 'thinking') return { type: 'thinking', thinking: '', signature: '' };
  return block.type === 'text'
    ? { type: 'text', text: '' }
    : { type: 'tool_use', id: block.id, name: block.name, input: {} };
}

/** The deltas of one block, as the API streams them (a thinking block ends with its signature). */
function deltasOf(block: ResponseBlock): { text: string; deltas: { piece: string; delta: Record<string, unknown> }[] } {
  if (block.type === 'thinking') {
    const pieces = block.thinking === '' ? [] : textChunks(block.thinking);
    return {
      text: block.thinking,
      deltas: [
        ...pieces.map((piece) => ({ piece, delta: { type: 'thinking_delta', thinking: piece } })),
        { piece: '', delta: { type: 'signature_delta', signature: block.signature } },
      ],
    };
  }
  if (block.type === 'text')
    return {
      text: block.text,
      deltas: textChunks(block.text).map((piece) => ({ piece, delta: { type: 'text_delta', text: piece } })),
    };
  const json = JSON.stringify(block.input);
  return {
    text: json,
    deltas: jsonChunks(json).map((piece) => ({ piece, delta: { type: 'input_json_delta', partial_json: piece } })),
  };
}

/**
 * Write the rest of a streaming response: the caller has already waited out the time to first
 * token, committed the cache writes and sent `message_start`. Then per block
 * `content_block_start`, deltas paced at the output rate, `content_block_stop`; a `ping` after
 * the first block starts (as the API does); `message_delta` with the stop reason and the
 * cumulative usage; `message_stop`.
 */
export async function streamBody(res: ServerResponse, message: ResponseMessage, options: StreamOptions): Promise<void> {
  let pinged = false;
  for (const [index, block] of message.content.entries()) {
    await write(
      res,
      sseFrame('content_block_start', { type: 'content_block_start', index, content_block: startBlock(block) }),
      options.signal,
    );
    if (!pinged) {
      pinged = true;
      await write(res, sseFrame('ping', { type: 'ping' }), options.signal);
    }
    const { text, deltas } = deltasOf(block);
    const tokens = options.blockTokens[index] ?? 0;
    for (const { piece, delta } of deltas) {
      await pace(options, text.length === 0 ? tokens : (tokens * piece.length) / text.length);
      await write(res, sseFrame('content_block_delta', { type: 'content_block_delta', index, delta }), options.signal);
      if (options.failMidStream) return failStream(res);
      if (options.cutMidStream) return cutAfter(res);
    }
    await write(res, sseFrame('content_block_stop', { type: 'content_block_stop', index }), options.signal);
  }
  if (options.failMidStream) return failStream(res);
  if (options.cutMidStream) return cutAfter(res);
  const { usage } = message;
  await write(
    res,
    sseFrame('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: message.stop_reason, stop_sequence: message.stop_sequence },
      usage: {
        output_tokens: usage.output_tokens,
        input_tokens: usage.input_tokens,
        cache_creation_input_tokens: usage.cache_creation_input_tokens,
        cache_read_input_tokens: usage.cache_read_input_tokens,
      },
    }),
  );
  await write(res, sseFrame('message_stop', { type: 'message_stop' }), options.signal);
  res.end();
}

/** The API's mid-stream failure: an `error` event with the error JSON, then the stream ends. */
async function failStream(res: ServerResponse): Promise<void> {
  await write(res, sseFrame('error', { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }));
  res.end();
}
