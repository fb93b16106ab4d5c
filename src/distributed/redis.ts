import { Redis } from 'ioredis';
import { ForkcacheError } from '../errors.ts';

/** How long a first connection may take before Redis is declared unreachable. */
export const CONNECT_TIMEOUT_MS = 5_000;

/**
 * A Redis connection for BullMQ (`maxRetriesPerRequest: null`), with its errors listened to:
 * ioredis reconnects by itself, and an unhandled `error` event would only spam the console.
 * `ready` rejects, naming the URL without its password, when the first connection fails.
 */
export function connectRedis(url: string, onError?: (err: Error) => void): { client: Redis; ready: Promise<void> } {
  const client = new Redis(url, { maxRetriesPerRequest: null, lazyConnect: false });
  const shown = url.replace(/\/\/[^@/]*@/, '//');
  let first: Error | undefined;
  client.on('error', (err: Error) => {
    first ??= err;
    onError?.(err);
  });
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () =>
        reject(
          new ForkcacheError(
            'INVALID_ARGUMENT',
            `redis: cannot connect to ${shown} (${first?.message ?? 'no answer'})`,
            { data: { field: 'redis' } },
          ),
        ),
      CONNECT_TIMEOUT_MS,
    );
    client.once('ready', () => {
      clearTimeout(timer);
      resolve();
    });
  });
  return { client, ready };
}
