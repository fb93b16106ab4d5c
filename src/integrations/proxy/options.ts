import { z } from 'zod';
import { systemClock, type Clock } from '../../core/util/clock.ts';
import { ForkcacheError } from '../../core/util/errors.ts';
import { BUILTIN_CATALOGUE, type ModelCatalogue } from '../../core/models/catalogue.ts';
import { parseOrThrow } from '../../core/util/validation.ts';
import { HEADER_NAME } from '../../core/wire/credentials.ts';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ForkCallRegistry } from './fork-calls.ts';

/** The real API: the default upstream. */
const DEFAULT_UPSTREAM = 'https://api.anthropic.com';

/** Options of `startProxy`. */
export interface ProxyOptions {
  /** Base URL requests are forwarded to (default the real API); a path prefix is kept. */
  upstream?: string;
  /** Interface to bind (default 127.0.0.1: loopback only). */
  host?: string;
  /** TCP port; 0 (default) picks a free one. */
  port?: number;
  /** Hold siblings until the writer of their shared prefix has begun its response. */
  warmFirst?: boolean;
  /** The longest a request is held by `warmFirst` (default 30 s). */
  warmWaitMs?: number;
  /** Drop Claude Code's `x-anthropic-billing-header` system block before forwarding. */
  stripBillingBlock?: boolean;
  /** Directory for the append-only exchange log (`exchanges.jsonl`, keys masked). */
  logDir?: string;
  /** Request bodies larger than this are refused with the API's 413 (default 32 MiB). */
  maxBodyBytes?: number;
  /** Request bytes held in memory at once, over every request; past it a request gets a 503 (default 256 MiB). */
  maxInFlightBodyBytes?: number;
  /** Open client connections at once; past it new ones are closed at once (default 1,024). */
  maxConnections?: number;
  /** A client must send its request headers within this (default 60 s; Node's `headersTimeout`). */
  headersTimeoutMs?: number;
  /** A client must send its whole request within this (default 5 min; Node's `requestTimeout`; a held or streaming answer is not cut). */
  requestTimeoutMs?: number;
  /** How often those two are checked (default 30 s; Node's `connectionsCheckingInterval`). */
  timeoutCheckMs?: number;
  /** The upstream may be silent this long, before its response or in the middle of it (default 10 min): then 504, or the stream is cut. */
  upstreamTimeoutMs?: number;
  /** More headers to mask wherever the proxy writes (the built-in credential headers always are). */
  maskHeaders?: readonly string[];
  /** Prices for the ledger (default the built-in catalogue). */
  modelTable?: ModelCatalogue;
  /** Time source: the warm-first bound and the upstream's silence (`upstreamTimeoutMs`); tests pass a ManualClock and move it. */
  clock?: Clock;
  /**
   * Keep the request and the assistant turn of every call of a fork tool (`mcp__<server>__fork`)
   * here, for the tool that runs it (`forkcache proxy --mcp`).
   */
  forkCalls?: ForkCallRegistry;
  /**
   * Requests this handler takes (it returns true) are served by it, not forwarded: the MCP
   * endpoint that runs beside the proxied API in one process.
   */
  route?: (req: IncomingMessage, res: ServerResponse) => boolean;
}

const schema = z
  .strictObject({
    upstream: z
      .string()
      .default(DEFAULT_UPSTREAM)
      .refine((u) => URL.canParse(u) && /^https?:$/.test(new URL(u).protocol), 'expected an http:// or https:// URL'),
    host: z.string().min(1).default('127.0.0.1'),
    port: z.number().int().min(0).max(65535).default(0),
    warmFirst: z.boolean().default(false),
    warmWaitMs: z.number().int().min(0).max(600_000).default(30_000),
    stripBillingBlock: z.boolean().default(false),
    logDir: z.string().min(1).optional(),
    maxBodyBytes: z
      .number()
      .int()
      .positive()
      .default(32 * 1024 * 1024),
    maxInFlightBodyBytes: z
      .number()
      .int()
      .positive()
      .default(256 * 1024 * 1024),
    maxConnections: z.number().int().positive().default(1024),
    headersTimeoutMs: z.number().int().positive().default(60_000),
    requestTimeoutMs: z.number().int().positive().default(300_000),
    timeoutCheckMs: z.number().int().positive().default(30_000),
    upstreamTimeoutMs: z.number().int().positive().max(2_147_483_647).default(600_000),
    maskHeaders: z.array(z.string().regex(HEADER_NAME, 'expected a header name')).default([]),
  })
  .refine((o) => o.headersTimeoutMs <= o.requestTimeoutMs, {
    path: ['headersTimeoutMs'],
    message: 'must not exceed requestTimeoutMs (the headers are part of the request)',
  });

export type ResolvedProxyOptions = z.output<typeof schema> & {
  clock: Clock;
  modelTable: ModelCatalogue;
  forkCalls: ForkCallRegistry | undefined;
  route: ((req: IncomingMessage, res: ServerResponse) => boolean) | undefined;
};

/** Validate and fill defaults; bad input is INVALID_OPTION naming the option. */
export function resolveProxyOptions(options: ProxyOptions = {}): ResolvedProxyOptions {
  const { clock, modelTable, forkCalls, route, ...plain } = options;
  const parsed = parseOrThrow(schema, plain, 'INVALID_OPTION', 'proxy options');
  if (clock !== undefined && (typeof clock.now !== 'function' || typeof clock.sleep !== 'function')) {
    throw new ForkcacheError('INVALID_OPTION', 'proxy options: clock: expected a Clock with now() and sleep()');
  }
  if (route !== undefined && typeof route !== 'function')
    throw new ForkcacheError('INVALID_OPTION', 'proxy options: route: expected a function');
  return { ...parsed, clock: clock ?? systemClock, modelTable: modelTable ?? BUILTIN_CATALOGUE, forkCalls, route };
}
