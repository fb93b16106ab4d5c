import { StringDecoder } from 'node:string_decoder';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { Transform } from 'node:stream';
import { findJsonShapeProblem } from '../../../core/util/json-shape.ts';
import type { AssistantCapture } from './assistant-capture.ts';
import { fromChatUsage, type ChatUsage } from '../../../core/ledger/chat-usage.ts';
import { fromResponsesUsage, type ResponsesUsage } from '../../../core/ledger/responses-usage.ts';

/** What the proxy learns from a response as it streams by (the bytes themselves are untouched). */
export interface ResponseFacts {
  messageId: string | undefined;
  /** Usage: `message_start`'s, updated by `message_delta` (output tokens are cumulative). */
  usage: Record<string, unknown> | undefined;
  /** `diagnostics.cache_miss_reason`, when the client asked for it. */
  missReason: Record<string, unknown> | undefined;
  /** An `event: error` frame, or an error body. */
  error: { type: string; message: string } | undefined;
}

/** A JSON body larger than this is forwarded but not read (no usage recorded for it). */
export const JSON_LIMIT = 16 * 1024 * 1024;
/** An SSE frame is never this large; a stream that claims one is not read further. */
export const FRAME_LIMIT = 4 * 1024 * 1024;

// OpenAI's Responses API streams `response.created` (its start) and `response.completed` /
// `response.incomplete` (the whole response, with its usage)
const INTERESTING = new Set([
  'message_start',
  'message_delta',
  'error',
  'response.created',
  'response.completed',
  'response.incomplete',
]);

function decoderFor(encoding: string | undefined): Transform | undefined {
  switch (encoding?.trim().toLowerCase()) {
    case 'gzip':
    case 'x-gzip':
      return createGunzip();
    case 'br':
      return createBrotliDecompress();
    case 'deflate':
      return createInflate();
    default:
      return undefined;
  }
}

/**
 * Reads a response as it goes by: SSE frames one at a time (only `message_start`,
 * `message_delta` and `error` are parsed; content deltas are skipped unparsed), or a JSON body.
 * A compressed response is decompressed on a copy: the client still gets the upstream's bytes.
 * `onStart` fires once, when the response has begun (`message_start`, or a JSON body's headers).
 */
export class ResponseTap {
  readonly facts: ResponseFacts = { messageId: undefined, usage: undefined, missReason: undefined, error: undefined };
  readonly #sse: boolean;
  readonly #decoder = new StringDecoder('utf8');
  readonly #inflate: Transform | undefined;
  #carry = '';
  /** Where the search for a frame end resumes in `#carry`: a long frame is scanned once, not per chunk. */
  #scanned = 0;
  #inflated = 0;
  #pending: Buffer[] = [];
  #json: Buffer[] = [];
  #jsonBytes = 0;
  #gaveUp = false;
  #onStart: (() => void) | undefined;
  /** Set when the assistant turn itself is wanted (a fork tool may continue it): every frame is read. */
  readonly #capture: AssistantCapture | undefined;

  constructor(
    contentType: string | undefined,
    contentEncoding: string | undefined,
    onStart: () => void,
    capture?: AssistantCapture,
  ) {
    this.#capture = capture;
    this.#sse = (contentType ?? '').includes('text/event-stream');
    this.#onStart = onStart;
    this.#inflate = decoderFor(contentEncoding);
    this.#inflate?.on('data', (chunk: Buffer) => {
      this.#inflated += chunk.length;
      this.#read(chunk);
    });
    this.#inflate?.on('error', () => this.#giveUp());
    if (!this.#sse) this.#started();
  }

  /** Bytes decompressed so far (a compressed response): what reading it has cost. */
  get inflatedBytes(): number {
    return this.#inflated;
  }

  /**
   * Stop reading for good: the decompressor is destroyed with whatever input it still holds,
   * and what was kept is dropped. A gzip bomb (600 KB inflating to 600 MiB with no frame end)
   * kept the proxy inflating and rescanning for tens of seconds after it had forwarded it.
   */
  #giveUp(): void {
    this.#gaveUp = true;
    this.#carry = '';
    this.#json = [];
    this.#pending = [];
    this.#inflate?.destroy();
  }

  #started(): void {
    const onStart = this.#onStart;
    this.#onStart = undefined;
    onStart?.();
  }

  /**
   * Feed a chunk exactly as it was sent to the client. It is read once this turn's I/O is done:
   * the write to the client is corked until the next tick and the end of the stream follows in
   * later ticks, so reading it any sooner would hold back the bytes it reads (a short answer
   * often arrives in one socket read, a dozen chunks and the end).
   */
  write(chunk: Buffer): void {
    if (this.#gaveUp) return;
    this.#pending.push(chunk);
    if (this.#pending.length === 1) setImmediate(this.#drain);
  }

  readonly #drain = (): void => {
    const chunks = this.#pending;
    this.#pending = [];
    for (const chunk of chunks) {
      if (this.#gaveUp) return;
      if (this.#inflate) this.#inflate.write(chunk);
      else this.#read(chunk);
    }
  };

  /** The response ended: parse a JSON body. Resolves once a compressed copy is drained. */
  async end(): Promise<void> {
    this.#drain();
    if (this.#inflate && !this.#gaveUp && !this.#inflate.destroyed) {
      const done = new Promise<void>((resolve) => {
        this.#inflate!.once('end', resolve);
        this.#inflate!.once('error', () => resolve());
        this.#inflate!.once('close', resolve); // destroyed on giving up: neither of the others comes
      });
      this.#inflate.end();
      this.#inflate.resume();
      await done;
    }
    if (!this.#sse && !this.#gaveUp && this.#jsonBytes > 0) this.#readJson(Buffer.concat(this.#json).toString('utf8'));
    this.#json = [];
  }

  #read(chunk: Buffer): void {
    if (this.#gaveUp) return; // the decompressor may still hand over what it had in hand
    if (!this.#sse) {
      this.#jsonBytes += chunk.length;
      if (this.#jsonBytes > JSON_LIMIT) this.#giveUp();
      else this.#json.push(chunk);
      return;
    }
    this.#carry += this.#decoder.write(chunk);
    const frameEnd = /\r?\n\r?\n/g;
    for (;;) {
      // a frame end may straddle the last chunk's end: resume a few characters back
      frameEnd.lastIndex = Math.max(0, this.#scanned - 3);
      const match = frameEnd.exec(this.#carry);
      if (!match) break;
      this.#frame(this.#carry.slice(0, match.index));
      this.#carry = this.#carry.slice(match.index + match[0].length);
      this.#scanned = 0;
    }
    this.#scanned = this.#carry.length;
    if (this.#carry.length > FRAME_LIMIT) this.#giveUp();
  }

  #frame(frame: string): void {
    // Most frames are content deltas: tell them by their first line, without splitting them
    // (unless a later line names the event again: the last one counts).
    if (frame.startsWith('event:') && this.#capture === undefined) {
      const end = frame.indexOf('\n');
      const only = end < 0 || !frame.includes('\nevent:', end);
      if (only && !INTERESTING.has(frame.slice(6, end < 0 ? undefined : end).trim())) return;
    }
    let event: string | undefined;
    const data: string[] = [];
    for (const line of frame.split(/\r?\n/)) {
      if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
    }
    if (event === undefined || (!INTERESTING.has(event) && this.#capture === undefined)) return;
    let json: Record<string, unknown>;
    try {
      json = JSON.parse(data.join('\n')) as Record<string, unknown>;
    } catch {
      return;
    }
    this.#capture?.frame(event, json);
    if (!INTERESTING.has(event)) return;
    if (event === 'message_start') {
      this.#message(json['message'] as Record<string, unknown> | undefined);
      this.#started();
    } else if (event === 'response.created') {
      const response = json['response'] as Record<string, unknown> | undefined;
      if (typeof response?.['id'] === 'string') this.facts.messageId = response['id'];
      this.#started();
    } else if (event === 'response.completed' || event === 'response.incomplete') {
      this.#response(json['response'] as Record<string, unknown> | undefined);
    } else if (event === 'message_delta') {
      const usage = json['usage'] as Record<string, unknown> | undefined;
      // Streaming usage is cumulative: a delta's counters replace message_start's (as the SDK does).
      if (usage)
        this.facts.usage = {
          ...this.facts.usage,
          ...Object.fromEntries(Object.entries(usage).filter(([, v]) => v !== null && v !== undefined)),
        };
    } else {
      this.#error(json);
    }
  }

  #message(message: Record<string, unknown> | undefined): void {
    if (!message) return;
    if (typeof message['id'] === 'string') this.facts.messageId = message['id'];
    if (typeof message['usage'] === 'object' && message['usage'] !== null)
      this.facts.usage = { ...(message['usage'] as Record<string, unknown>) };
    const reason = (message['diagnostics'] as { cache_miss_reason?: unknown } | null | undefined)?.cache_miss_reason;
    // Kept in the record and written to the log: an upstream's object nested thousands deep would
    // overflow the stack there (JSON.stringify), so only a reasonably shaped one is kept.
    if (typeof reason === 'object' && reason !== null && findJsonShapeProblem(reason, 32) === undefined)
      this.facts.missReason = reason as Record<string, unknown>;
  }

  #error(json: Record<string, unknown>): void {
    const error = json['error'] as { type?: unknown; message?: unknown } | undefined;
    if (error) this.facts.error = { type: String(error.type ?? 'error'), message: String(error.message ?? '') };
  }

  #readJson(text: string): void {
    let json: Record<string, unknown>;
    try {
      json = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return;
    }
    if (json['type'] === 'message') {
      this.#message(json);
      this.#capture?.json(json);
    } else if (json['object'] === 'response') this.#response(json);
    else if (json['object'] === 'chat.completion') {
      if (typeof json['id'] === 'string') this.facts.messageId = json['id'];
      this.facts.usage = fromChatUsage(json['usage'] as ChatUsage | undefined) as Record<string, unknown>;
    } else if (json['type'] === 'error' || typeof json['error'] === 'object') this.#error(json);
  }

  /** A Responses API response: its id, and its usage in the ledger's terms (writes by TTL). */
  #response(response: Record<string, unknown> | undefined): void {
    if (!response) return;
    if (typeof response['id'] === 'string') this.facts.messageId = response['id'];
    this.facts.usage = fromResponsesUsage(response['usage'] as ResponsesUsage | undefined) as Record<string, unknown>;
  }
}
