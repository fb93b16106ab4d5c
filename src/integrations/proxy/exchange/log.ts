import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { jsonOrText } from '../../../core/util/json-shape.ts';

/** A response body kept for the log up to this size; the rest is counted, not kept. */
export const LOGGED_BODY_LIMIT = 1024 * 1024;

/**
 * `--log-dir`: every exchange as JSON lines in `exchanges.jsonl`, appended with one synchronous
 * write per line: a `request` line when it is forwarded and a `response` line when it ends, so
 * a crash of the proxy loses no line already written and leaves at most a request without its
 * response. Credentials are masked: by header name where the line is built, and every line
 * again by value (`mask`: the credentials the proxy has seen, wherever an upstream echoed them).
 * The file is only ever appended to.
 */
export class ExchangeLog {
  readonly path: string;
  readonly #mask: (text: string) => string;
  #fd: number | undefined;

  constructor(dir: string, mask: (text: string) => string = (text) => text) {
    this.#mask = mask;
    mkdirSync(dir, { recursive: true });
    this.path = join(dir, 'exchanges.jsonl');
    this.#fd = openSync(this.path, 'a');
  }

  write(line: Record<string, unknown>): void {
    if (this.#fd === undefined) return;
    writeSync(this.#fd, `${this.#mask(JSON.stringify(line))}\n`);
  }

  close(): void {
    if (this.#fd !== undefined) closeSync(this.#fd);
    this.#fd = undefined;
  }
}

/** The request body as logged: its JSON when it parses (and is not too deep to write out), else its text. */
export function loggedBody(body: Buffer): unknown {
  return jsonOrText(body.toString('utf8'));
}
