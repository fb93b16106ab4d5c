import type { Redis } from 'ioredis';
import { ForkcacheError } from '../../../core/util/errors.ts';
import type { FrozenPrefix } from '../../../core/prefix/freeze.ts';
import { HEAD_ENDS, isHeadEnd, sha256Hex, writeFrozenSab } from '../../../core/prefix/sab.ts';
import { prefixKey } from '../keys.ts';

/** A head not used for this long leaves Redis (each may be up to 32 MiB); every use renews it. */
const PREFIX_TTL_SECONDS = 24 * 60 * 60;

/** Store a frozen head in Redis under its own sha256 (idempotent), or renew its lifetime. */
export async function storePrefix(redis: Redis, prefix: FrozenPrefix): Promise<void> {
  const key = prefixKey(prefix.sha256);
  if ((await redis.expire(key, PREFIX_TTL_SECONDS)) === 1) return;
  await redis
    .multi()
    .hset(key, { head: Buffer.from(prefix.head), headEnd: prefix.headEnd })
    .expire(key, PREFIX_TTL_SECONDS)
    .exec();
}

/**
 * Load a head from Redis into this host's own SharedArrayBuffer, verifying its hash: every
 * fork of that prefix on this host is then served from the one buffer. Each error says what
 * was wrong: the key is missing (expired, or Redis lost its data), its head end is not one the
 * SAB layout defines (a newer or foreign writer), or its bytes do not hash to the job's head.
 */
export async function loadPrefix(redis: Redis, sha256: string): Promise<SharedArrayBuffer> {
  const key = prefixKey(sha256);
  const short = sha256.slice(0, 16);
  const [head, headEnd] = await Promise.all([redis.hgetBuffer(key, 'head'), redis.hget(key, 'headEnd')]);
  if (!head)
    throw new ForkcacheError(
      'FORK_PREFIX_CORRUPT',
      `frozen prefix ${short} is not in Redis (${key} is missing: expired after ${PREFIX_TTL_SECONDS / 3600} h unused, or Redis lost its data)`,
      { data: { sha256, key } },
    );
  if (!isHeadEnd(headEnd))
    throw new ForkcacheError(
      'FORK_PREFIX_CORRUPT',
      `frozen prefix ${short} in Redis has head end ${JSON.stringify(headEnd)}, not one of ${HEAD_ENDS.join(', ')} (written by another version of forkcache?)`,
      { data: { sha256, key, headEnd } },
    );
  const actual = sha256Hex(head);
  if (actual !== sha256)
    throw new ForkcacheError(
      'FORK_PREFIX_CORRUPT',
      `frozen prefix in Redis hashes to ${actual.slice(0, 16)}, not ${short}`,
      { data: { expected: sha256, actual } },
    );
  return writeFrozenSab(head, headEnd).sab;
}
