import type { IncomingMessage } from 'node:http';
import { ForkcacheError } from './errors.ts';

/**
 * The request bytes a server (the proxy, the emulator) holds in memory, over every request at
 * once. Each body is bounded on its own (`maxBodyBytes`), but twelve 31 MiB bodies at once took
 * the proxy from 247 MB to 1 GB of RSS: past this budget a request is refused instead of held.
 */
export class BodyBudget {
  readonly limit: number;
  used = 0;

  constructor(limit: number) {
    this.limit = limit;
  }
}

/** A body read in full, with its share of the budget to give back once the exchange is over. */
export interface HeldBody {
  bytes: Buffer;
  /** Idempotent. */
  release(): void;
}

type BodyOutcome = HeldBody | 'too-large' | 'overloaded';

/**
 * Read a request body within `perRequest` bytes and the shared budget. Past either, the rest is
 * drained unbuffered (so the client reads the answer instead of failing with a broken pipe) and
 * the outcome says which limit it met. A declared `content-length` that cannot fit is refused
 * before a byte is kept.
 */
export function readBody(req: IncomingMessage, perRequest: number, budget: BodyBudget): Promise<BodyOutcome> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? NaN);
    let outcome: 'too-large' | 'overloaded' | undefined =
      declared > perRequest ? 'too-large' : declared > budget.limit - budget.used ? 'overloaded' : undefined;
    const chunks: Buffer[] = [];
    let size = 0;
    let held = 0;
    const giveBack = (): void => {
      budget.used -= held;
      held = 0;
    };
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (outcome) return;
      if (size > perRequest) outcome = 'too-large';
      else if (budget.used + chunk.length > budget.limit) outcome = 'overloaded';
      if (outcome) {
        chunks.length = 0;
        return giveBack();
      }
      chunks.push(chunk);
      held += chunk.length;
      budget.used += chunk.length;
    });
    req.once('end', () => {
      if (outcome) return resolve(outcome);
      resolve({ bytes: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size), release: giveBack });
    });
    req.once('error', (err) => {
      giveBack();
      reject(err);
    });
    // A client that leaves mid-body never sends its end: without this the exchange would hang.
    req.once('close', () => {
      if (req.complete) return;
      giveBack();
      reject(new ForkcacheError('HTTP_CLIENT_GONE', 'client closed the connection while sending'));
    });
  });
}
