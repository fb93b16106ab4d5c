import type { IncomingMessage } from 'node:http';
import type { ProxyCore } from '../core.ts';
import { shapeOf, stripBillingBody, type RequestShape } from '../diagnosis/shape.ts';

/** What the proxy knows of a request before it sends it, and the bytes it sends. */
export interface RequestRead {
  /** The path as the ledger, the log and stderr show it: credentials in the query string masked. */
  path: string;
  /** A Messages call: the only kind laid out, diagnosed and priced. */
  isMessages: boolean;
  /** Its shape is read before sending (a fix needs it), not from the backlog. */
  readFirst: boolean;
  /** Read before sending, or undefined (not a Messages call, or left to the backlog). */
  shape: RequestShape | undefined;
  /** Claude Code's billing block is dropped from what is sent (`--strip-billing-block`). */
  strip: boolean;
  /** The bytes sent upstream. */
  body: Buffer;
}

/**
 * The read step: mask what the request carries, and lay it out now only when a fix needs it
 * (the warm gate, stripping the billing block).
 */
export function readRequest(core: ProxyCore, req: IncomingMessage, raw: Buffer): RequestRead {
  // Credentials (a key in the query string) never reach the ledger, the log or stderr; the
  // header values are remembered, so an upstream that echoes one back has it masked too.
  core.mask.learn(req.headers);
  const path = core.mask.url(req.url ?? '/');
  const isMessages = req.method === 'POST' && /^\/v1\/messages(\?|$)/.test(path);
  // Read the request before sending only when a fix needs it; otherwise from the backlog, so
  // that laying out its prefix costs the request nothing.
  const readFirst = core.gate !== undefined || core.options.stripBillingBlock;
  const shape = isMessages && readFirst ? shapeOf(raw) : undefined;
  const strip = shape !== undefined && core.options.stripBillingBlock && shape.billing !== undefined;
  const body = strip ? stripBillingBody(shape) : raw;
  return { path, isMessages, readFirst, shape, strip, body };
}
