import { Redis } from 'ioredis';
import { ForkcacheError } from '../../../core/util/errors.ts';
import { shownRedisUrl } from '../keys.ts';

/** How long a first connection may take before Redis is declared unreachable. */
const CONNECT_TIMEOUT_MS = 5_000;

/** Replies that mean the credentials are wrong: retrying cannot help. */
const AUTH_REPLY = /^(WRONGPASS|NOAUTH|NOPERM|ERR invalid password|ERR invalid username)/;
export const isAuthError = (err: Error): boolean => AUTH_REPLY.test(err.message);

/**
 * A Redis connection for BullMQ (`maxRetriesPerRequest: null`), with its errors listened to:
 * ioredis reconnects by itself, and an unhandled `error` event would only spam the console.
 * `ready` rejects, naming the URL without its password, when the first connection fails:
 * `REDIS_AUTH_FAILED` at once when Redis refuses the credentials (ioredis would retry them
 * forever), `INVALID_OPTION` when nothing answered within `CONNECT_TIMEOUT_MS`.
 */
export function connectRedis(url: string, onError?: (err: Error) => void): { client: Redis; ready: Promise<void> } {
  const client = new Redis(url, { maxRetriesPerRequest: null, lazyConnect: false });
  const shown = shownRedisUrl(url);
  let first: Error | undefined;
  let refuseCredentials: ((err: Error) => void) | undefined;
  client.on('error', (err: Error) => {
    first ??= err;
    if (isAuthError(err)) refuseCredentials?.(err);
    onError?.(err);
  });
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () =>
        reject(
          new ForkcacheError('INVALID_OPTION', `redis: cannot connect to ${shown} (${first?.message ?? 'no answer'})`, {
            data: { field: 'redis' },
          }),
        ),
      CONNECT_TIMEOUT_MS,
    );
    refuseCredentials = (err) => {
      clearTimeout(timer);
      reject(
        new ForkcacheError(
          'REDIS_AUTH_FAILED',
          `redis: ${shown} refused the credentials (${err.message.trim()}): check the user and password in the --redis URL (redis://[user]:password@host:port)`,
          { data: { field: 'redis' } },
        ),
      );
    };
    client.once('ready', () => {
      clearTimeout(timer);
      refuseCredentials = undefined;
      resolve();
    });
  });
  return { client, ready };
}
