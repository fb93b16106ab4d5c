import type { ServerResponse } from 'node:http';

/** The Anthropic error type the proxy answers with for each status it writes itself. */
const TYPES: Readonly<Record<number, string>> = {
  413: 'request_too_large',
  502: 'api_error',
  503: 'overloaded_error',
  504: 'timeout_error',
};

/**
 * Answer a client with the API's own error shape, for what the proxy decided itself (a body it
 * will not hold, an upstream that failed it). The header says who wrote it: a client or a log
 * reader can tell the proxy's 502 from one an upstream sent. A client that has already left is
 * not written to.
 */
export function sendProxyError(
  res: ServerResponse,
  status: number,
  message: string,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent || res.destroyed) return;
  const body = JSON.stringify({ type: 'error', error: { type: TYPES[status] ?? 'api_error', message } });
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    'x-forkcache-proxy-error': 'true',
    ...headers,
  });
  res.end(body);
}
