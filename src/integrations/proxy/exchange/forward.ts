import { request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Clock } from '../../../core/util/clock.ts';
import type { ProxyCore } from '../core.ts';
import { sendProxyError } from '../proxy-error.ts';
import { targetPath } from './upstream.ts';

/** Hop-by-hop headers belong to one connection; they are never forwarded (RFC 9110 §7.6.1). */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
]);

/** The client's headers as sent (names as written), minus hop-by-hop ones; host and length set. */
function upstreamHeaders(req: IncomingMessage, host: string, bodyBytes: number): OutgoingHttpHeaders {
  const headers: Record<string, string | string[]> = {};
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    const lower = name.toLowerCase();
    if (HOP_BY_HOP.has(lower) || lower === 'host' || lower === 'content-length') continue;
    const existing = headers[name];
    headers[name] = existing === undefined ? raw[i + 1]! : ([] as string[]).concat(existing, raw[i + 1]!);
  }
  headers['host'] = host;
  if (bodyBytes > 0 || req.method === 'POST' || req.method === 'PUT' || req.method === 'PATCH')
    headers['content-length'] = String(bodyBytes);
  return headers;
}

/** The upstream's response headers as a flat raw list (names and order kept), minus hop-by-hop. */
function responseHeaders(up: IncomingMessage): string[] {
  const out: string[] = [];
  const raw = up.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    if (!HOP_BY_HOP.has(raw[i]!.toLowerCase())) out.push(raw[i]!, raw[i + 1]!);
  }
  return out;
}

interface ForwardHooks {
  /** The upstream's status line and headers arrived (they are already on their way to the client). */
  onResponse(up: IncomingMessage): void;
  /** A chunk of the body, exactly as passed to the client. */
  onChunk(chunk: Buffer): void;
  /**
   * The exchange is over: completely, or cut (`error` says by whom). `answered` is the status
   * the proxy wrote itself (502, 504) when the upstream failed before its response began.
   */
  onEnd(error: string | undefined, answered?: number): void;
}

/** The statuses a final response may carry (RFC 9110 §15: three digits, 1xx are interim). */
const validStatus = (status: number | undefined): status is number =>
  status !== undefined && Number.isInteger(status) && status >= 200 && status <= 599;

/**
 * Call `onSilent` once nothing was heard for `timeoutMs` (`touch` says something was), unless
 * stopped first. It runs on the proxy's clock, so a test moves time instead of waiting for it
 * (and a loaded machine's slow answer is not taken for a silent upstream). The quiet time is
 * counted in what the watch slept, the clock's reading only bounding it after a `touch`: the
 * system clock is the wall clock, and a step of it (NTP, a laptop waking) neither cuts a live
 * stream early nor makes a sleep longer than the timeout.
 */
function watchSilence(clock: Clock, timeoutMs: number, onSilent: () => void): { touch(): void; stop(): void } {
  let heard = clock.now();
  let touches = 0;
  const stopped = new AbortController();
  void (async () => {
    // how long the upstream has been quiet, as far as the sleeps tell
    let quiet = 0;
    for (;;) {
      const before = touches;
      const ms = timeoutMs - quiet;
      try {
        await clock.sleep(ms, stopped.signal);
      } catch {
        return; // stopped
      }
      if (stopped.signal.aborted) return;
      quiet = touches === before ? quiet + ms : Math.min(ms, Math.max(0, clock.now() - heard));
      if (quiet >= timeoutMs) return onSilent();
    }
  })();
  return {
    touch: () => {
      heard = clock.now();
      touches += 1;
    },
    stop: () => stopped.abort(),
  };
}

/**
 * Forward one request and stream the response back as it comes: status, headers and bytes
 * unchanged, through `pipe` (so a slow client slows the upstream read: backpressure). A client
 * that goes away cancels the upstream request. An upstream that fails before its response
 * begins — unreachable, reset, silent past `upstreamTimeoutMs`, an invalid status (`000`,
 * `099`, `600`), bytes that are not HTTP — gets the client a 502 (504 for the silence) in the
 * API's error shape, which every SDK retries; the proxy itself is never at risk (an invalid
 * status once threw out of this callback and killed the process). Once the response has begun
 * its status is spent: a failure then cuts the client's connection, as the upstream cut ours.
 */
export function forward(
  core: ProxyCore,
  req: IncomingMessage,
  res: ServerResponse,
  body: Buffer,
  signal: AbortSignal,
  hooks: ForwardHooks,
): void {
  const { target } = core;
  const timeoutMs = core.options.upstreamTimeoutMs;
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  let ended = false;
  let began = false;
  const end = (error: string | undefined, answered?: number): void => {
    if (ended) return;
    ended = true;
    silence.stop();
    signal.removeEventListener('abort', onAbort);
    hooks.onEnd(error, answered);
  };
  /** The upstream failed us: answer the client ourselves if we still can, else cut it. */
  const fail = (status: 502 | 504, error: string): void => {
    if (ended) return;
    upReq.destroy();
    if (began || res.headersSent) {
      res.destroy();
      return end(error);
    }
    sendProxyError(res, status, `forkcache proxy: ${error}`);
    end(error, status);
  };
  const upReq = send({
    hostname: target.hostname,
    port: target.port,
    path: targetPath(target, req.url ?? '/'),
    method: req.method,
    headers: upstreamHeaders(req, target.host, body.length),
    agent: core.agent,
  });
  const onAbort = (): void => {
    upReq.destroy();
    end('client closed the connection');
  };
  signal.addEventListener('abort', onAbort, { once: true });
  // No response byte (or no body byte mid-stream) for this long, on the proxy's clock.
  const silence = watchSilence(core.options.clock, timeoutMs, () =>
    fail(504, `upstream sent nothing for ${timeoutMs} ms (${began ? 'mid-response' : 'no response'})`),
  );
  upReq.on('response', (up) => {
    if (ended) return void up.destroy();
    silence.touch();
    if (!validStatus(up.statusCode)) {
      up.destroy();
      return fail(502, `upstream sent an invalid status ${JSON.stringify(up.statusCode ?? null)}`);
    }
    try {
      // The upstream's headers only: Node would add a `Date` of its own otherwise.
      res.sendDate = false;
      res.writeHead(up.statusCode, up.statusMessage, responseHeaders(up));
    } catch (err) {
      up.destroy();
      return fail(
        502,
        `upstream sent a response the proxy cannot pass on (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
      );
    }
    began = true;
    // Headers go out with the first body bytes (one packet, as most upstreams send them), or on
    // their own if the body is slow to start: an SSE stream may idle until its first event.
    const flush = setImmediate(() => res.headersSent || res.destroyed || res.flushHeaders());
    up.once('data', () => clearImmediate(flush));
    hooks.onResponse(up);
    // Piped first: each chunk (and the end) reaches the client before the proxy looks at it.
    up.pipe(res);
    up.on('data', (chunk: Buffer) => {
      silence.touch();
      hooks.onChunk(chunk);
    });
    up.on('end', () => end(up.complete ? undefined : 'upstream cut the response'));
    up.on('aborted', () => {
      res.destroy();
      end('upstream cut the response');
    });
    up.on('error', () => {
      res.destroy();
      end('upstream cut the response');
    });
  });
  upReq.on('error', (err: NodeJS.ErrnoException) => {
    if (ended) return;
    const code = err.code ?? err.message;
    if (began) return fail(502, `upstream cut the response (${code})`);
    fail(502, `upstream: ${code}${code.startsWith('HPE_') ? ' (not a valid HTTP response)' : ''}`);
  });
  upReq.end(body);
}
