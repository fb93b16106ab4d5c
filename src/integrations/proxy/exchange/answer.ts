import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { Clock } from '../../../core/util/clock.ts';
import type { AssistantCapture } from './assistant-capture.ts';
import { LOGGED_BODY_LIMIT } from './log.ts';
import { ResponseTap, type ResponseFacts } from './response-tap.ts';

interface AnswerTapOptions {
  clock: Clock;
  sentAt: number;
  /** Keep the body's first `LOGGED_BODY_LIMIT` bytes for the exchange log. */
  log: boolean;
  /** Read the assistant turn of a 200 (a fork tool may continue it). */
  capture: AssistantCapture | undefined;
  /** A 2xx response began (`at`): what the request wrote is readable now. Called once at most. */
  onBegin(at: number): void;
}

/**
 * The tap step: what the proxy learns of the upstream's answer while passing it on, fed by
 * `forward`'s hooks: status, headers, time to the first byte, the body's facts (usage, ids,
 * errors) and the bytes the exchange log keeps.
 */
export class AnswerTap {
  status: number | undefined;
  headers: IncomingHttpHeaders = {};
  ttfbMs: number | undefined;
  /** A 2xx response began. */
  began = false;
  /** Body bytes passed on, logged or not. */
  bytes = 0;
  #tap: ResponseTap | undefined;
  readonly #logged: Buffer[] = [];
  readonly #options: AnswerTapOptions;

  constructor(options: AnswerTapOptions) {
    this.#options = options;
  }

  /** The upstream's status line and headers arrived. */
  response(up: Pick<IncomingMessage, 'statusCode' | 'headers'>): void {
    const { clock, sentAt, capture } = this.#options;
    this.status = up.statusCode;
    this.ttfbMs = clock.now() - sentAt;
    this.headers = up.headers;
    this.#tap = new ResponseTap(
      up.headers['content-type'],
      up.headers['content-encoding'] as string | undefined,
      () => this.#begin(),
      this.status === 200 ? capture : undefined,
    );
  }

  /** A chunk of the body, exactly as passed to the client. */
  chunk(chunk: Buffer): void {
    this.#tap?.write(chunk);
    if (this.#options.log && this.bytes < LOGGED_BODY_LIMIT)
      this.#logged.push(chunk.subarray(0, LOGGED_BODY_LIMIT - this.bytes));
    this.bytes += chunk.length;
  }

  /** The upstream failed before its response began: the client got the proxy's own 502/504. */
  answered(status: number | undefined): void {
    if (status !== undefined) this.status = status;
  }

  /** The body read to its end: its facts (undefined when no response came). */
  async end(): Promise<ResponseFacts | undefined> {
    await this.#tap?.end();
    return this.#tap?.facts;
  }

  /** The bytes kept for the log. */
  logged(): Buffer {
    return Buffer.concat(this.#logged);
  }

  #begin(): void {
    if (this.began || this.status === undefined || this.status >= 300) return;
    this.began = true;
    this.#options.onBegin(this.#options.clock.now());
  }
}
