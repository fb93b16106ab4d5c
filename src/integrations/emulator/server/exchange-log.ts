import { mkdirSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import type { CachePlan } from '../cache/plan.ts';
import type { ResponseUsage } from '../types.ts';
import type { Position } from '../cache/render.ts';
import { jsonOrText } from '../../../core/util/json-shape.ts';
import { credentialMask, type CredentialMask } from '../../../core/wire/credentials.ts';

/** Where one cache position sits, as the API names fields (`system.1`, `messages.3.content.0`). */
export function positionPath(p: Position): string {
  return p.segment === 'messages' ? `messages.${p.message}.content.${p.block}` : `${p.segment}.${p.block}`;
}

/** The cache plan as a user debugging a miss wants it: what was read and written, and where. */
export interface LoggedCachePlan {
  model: string;
  totalTokens: number;
  markers: { path: string; ttl: string; tokens: number }[];
  read: { path: string; tokens: number } | null;
  writes: { path: string; tokens: number; ttl: string }[];
  usage: CachePlan['usage'];
  /** A billing-header block left out of the cache key (see `cacheBillingBlock`). */
  billingBlockIgnored: boolean;
}

export function describePlan(
  model: string,
  positions: readonly Position[],
  markers: readonly { position: number; ttl: string }[],
  plan: CachePlan,
  billingBlockIgnored: boolean,
): LoggedCachePlan {
  const at = (i: number): Position => positions[i]!;
  return {
    model,
    totalTokens: plan.totalTokens,
    markers: markers.map((m) => ({ path: positionPath(at(m.position)), ttl: m.ttl, tokens: at(m.position).cumTokens })),
    read: plan.read ? { path: positionPath(at(plan.read.position)), tokens: plan.read.tokens } : null,
    writes: plan.writes.map((w) => ({ path: positionPath(at(w.position)), tokens: w.tokens, ttl: w.ttl })),
    usage: plan.usage,
    billingBlockIgnored,
  };
}

/** One request/response exchange, collected while it happens and written when it ends. */
export interface Exchange {
  cache?: LoggedCachePlan;
  /**
   * What this exchange billed: the message's id and the usage counted in `stats()` (`null`:
   * nothing, e.g. an error answer or a non-streamed response that failed). Absent on routes
   * that bill nothing.
   */
  billed?: { messageId: string; usage: ResponseUsage } | null;
}

/**
 * `--log-dir DIR`: one JSON file per exchange (request line, headers with keys masked, body,
 * status, response headers, the response body or SSE text, and the cache plan). Files are
 * numbered in arrival order so `ls` shows a session in sequence.
 */
export class ExchangeLog {
  readonly #dir: string;
  readonly #mask: CredentialMask;
  #counter = 0;

  /** `maskHeaders`: more headers to mask than the built-in credential headers. */
  constructor(dir: string, maskHeaders: readonly string[] = []) {
    this.#dir = dir;
    this.#mask = credentialMask(maskHeaders);
    mkdirSync(dir, { recursive: true });
  }

  /** Start recording one exchange: taps the response's writes; writes the file when it ends. */
  begin(
    req: IncomingMessage,
    res: ServerResponse,
    requestId: string,
    startedAt: number,
  ): { exchange: Exchange; body(raw: Buffer | 'too-large' | 'overloaded'): void } {
    const seq = ++this.#counter;
    const exchange: Exchange = {};
    const chunks: Buffer[] = [];
    let requestBody: unknown = null;
    const tap = (chunk: unknown, encoding?: unknown): void => {
      if (chunk === undefined || chunk === null || typeof chunk === 'function') return;
      chunks.push(
        Buffer.isBuffer(chunk)
          ? chunk
          : Buffer.from(String(chunk), typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8'),
      );
    };
    const write = res.write.bind(res) as (...args: unknown[]) => boolean;
    const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
    res.write = ((...args: unknown[]) => {
      tap(args[0], args[1]);
      return write(...args);
    }) as ServerResponse['write'];
    res.end = ((...args: unknown[]) => {
      tap(args[0], args[1]);
      return end(...args);
    }) as ServerResponse['end'];
    res.once('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const contentType = String(res.getHeader('content-type') ?? '');
      let responseBody: unknown = text;
      if (contentType.startsWith('application/json')) {
        try {
          responseBody = JSON.parse(text);
        } catch {
          // keep the text: a truncated body is itself worth seeing
        }
      }
      const record = {
        requestId,
        startedAt: new Date(startedAt).toISOString(),
        request: {
          method: req.method,
          url: this.#mask.url(req.url ?? '/'),
          httpVersion: req.httpVersion,
          headers: this.#mask.headers(req.headers),
          body: requestBody,
        },
        response: {
          status: res.statusCode,
          headers: this.#mask.headers(res.getHeaders() as Record<string, string | string[] | number | undefined>),
          completed: res.writableFinished,
          body: responseBody,
        },
        cache: exchange.cache ?? null,
        ...(exchange.billed !== undefined ? { billed: exchange.billed } : {}),
      };
      const name = `${String(seq).padStart(5, '0')}-${requestId}.json`;
      writeFileSync(join(this.#dir, name), `${JSON.stringify(record, null, 2)}\n`);
    });
    return {
      exchange,
      body(raw) {
        if (typeof raw === 'string') {
          requestBody =
            raw === 'too-large'
              ? '(body over the size limit: not logged)'
              : '(body over the in-flight limit: not logged)';
          return;
        }
        const text = raw.toString('utf8');
        requestBody = text === '' ? null : jsonOrText(text);
      },
    };
  }
}
