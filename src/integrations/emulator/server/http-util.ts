import type { IncomingMessage, ServerResponse } from 'node:http';
import { readBody, type HeldBody } from '../../../core/util/http-body.ts';
import { findJsonShapeProblem } from '../../../core/util/json-shape.ts';
import type { EmulatorCore } from './core.ts';
import { ApiError, invalidRequest } from '../api-error.ts';
import { API_VERSIONS } from '../request/validate.ts';

/**
 * The request body, within `maxBodyBytes` and the shared `maxInFlightBodyBytes`: past either
 * the rest is drained unbuffered and the API's 413 (or overload error) is thrown. The caller
 * releases the body's share once the exchange is over.
 */
export async function takeBody(
  core: EmulatorCore,
  req: IncomingMessage,
  log: { body(raw: Buffer | 'too-large' | 'overloaded'): void } | undefined,
): Promise<HeldBody> {
  const held = await readBody(req, core.options.maxBodyBytes, core.bodies);
  log?.body(typeof held === 'string' ? held : held.bytes);
  if (held === 'too-large') throw tooLargeError(core.options.maxBodyBytes);
  if (held === 'overloaded') throw overloadedError(core.options.maxInFlightBodyBytes);
  return held;
}

/** The bodies in flight would pass `maxInFlightBodyBytes`: the API's own overload answer (529; 503 in the Chat modes). */
function overloadedError(limit: number): ApiError {
  return new ApiError(
    'EMULATOR_REQUEST_TOO_LARGE',
    'overloaded_error',
    `Overloaded: request bodies in flight would pass ${limit} bytes; retry shortly.`,
    { limit },
  );
}

function tooLargeError(limit: number): ApiError {
  return new ApiError(
    'EMULATOR_REQUEST_TOO_LARGE',
    'request_too_large',
    `Request exceeds the maximum allowed number of bytes (${limit}).`,
    { limit },
  );
}

/**
 * Parse a JSON body: 400 on syntax errors, and on nesting too deep to validate (a 5,000-deep
 * schema overflowed the validator's stack: a 500, which the SDK retries in vain).
 */
export function parseJson(body: Buffer): unknown {
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch (err) {
    throw invalidRequest(`There was an error parsing the body of your request: ${(err as Error).message}`);
  }
  const problem = findJsonShapeProblem(value);
  if (problem?.kind === 'depth') throw invalidRequest(`${problem.path}: ${problem.message}`);
  return value;
}

/** One request header's value (the first, if repeated). */
export function getHeader(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** The request's API key (either auth style): rate limits are per key. */
export function apiKeyOf(req: IncomingMessage): string {
  return getHeader(req, 'x-api-key') || /^Bearer\s+(.+)$/i.exec(getHeader(req, 'authorization') ?? '')?.[1] || '';
}

/**
 * Both auth styles: `x-api-key` (SDK 0.x) and `Authorization: Bearer` (SDK 1.x). Any non-empty
 * key is accepted unless the emulator was given one.
 */
export function checkAuth(req: IncomingMessage, expected: string | undefined): void {
  const bearer = /^Bearer\s+(.+)$/i.exec(getHeader(req, 'authorization') ?? '')?.[1];
  const key = getHeader(req, 'x-api-key') || bearer;
  if (!key) throw new ApiError('EMULATOR_AUTHENTICATION', 'authentication_error', 'x-api-key header is required');
  if (expected !== undefined && key !== expected)
    throw new ApiError('EMULATOR_AUTHENTICATION', 'authentication_error', 'invalid x-api-key');
}

/** The `anthropic-version` header: required, one of the versions the emulator knows. */
export function checkVersion(req: IncomingMessage): string {
  const version = getHeader(req, 'anthropic-version');
  if (!version) throw invalidRequest('anthropic-version: header is required');
  if (!(API_VERSIONS as readonly string[]).includes(version)) {
    throw invalidRequest(`anthropic-version: "${version}" is not a valid version (known: ${API_VERSIONS.join(', ')})`);
  }
  return version;
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/**
 * A 2xx JSON response whose connection drops half-way through its body (the `cut` fault): the
 * headers promise the whole length, the client reads part of it, then the socket closes.
 */
export function sendCutJson(res: ServerResponse, status: number, body: unknown): void {
  const bytes = Buffer.from(JSON.stringify(body));
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': bytes.byteLength });
  void cutAfter(res, bytes.subarray(0, Math.floor(bytes.byteLength / 2)));
}

/**
 * Drop the connection once `last` (and all written before it) has left: destroyed at once, the
 * socket would discard what is still buffered, headers included, and the client would see a
 * connection that failed, not a body cut part-way.
 */
export async function cutAfter(res: ServerResponse, last: Buffer | string = ''): Promise<void> {
  await new Promise<void>((resolve) => res.write(last, () => resolve()));
  res.destroy();
}

/** Start an SSE response. */
export function startSse(res: ServerResponse): void {
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
}
