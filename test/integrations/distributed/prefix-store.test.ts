import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prefixKey } from '../../../src/integrations/distributed/keys.ts';
import { loadPrefix, storePrefix } from '../../../src/integrations/distributed/store/prefix-store.ts';
import { freeze } from '../../../src/core/prefix/freeze.ts';
import { HEAD_ENDS, readFrozenHeader } from '../../../src/core/prefix/sab.ts';
import { bigSnapshot } from '../../core/engine/helpers.ts';
import { HAVE_REDIS, REDIS_SERVER, RedisServer } from './cluster.ts';

let server: RedisServer;
let redis: Redis;
beforeAll(async () => {
  if (!HAVE_REDIS) return;
  server = await RedisServer.start();
  redis = new Redis(server.url);
});
afterAll(async () => {
  redis?.disconnect();
  await server?.kill();
});

describe.skipIf(!HAVE_REDIS)(`the frozen heads in Redis (needs ${REDIS_SERVER})`, () => {
  it('stores and loads back every head end the SAB layout defines (a Chat head ends message-closed)', async () => {
    const heads = [
      freeze(bigSnapshot('store-anthropic:')),
      freeze(bigSnapshot('store-dashscope:'), { provider: 'dashscope', layout: 'qwen' }),
      freeze({ ...bigSnapshot('store-empty:'), messages: [] } as never, { provider: 'anthropic' }),
    ].filter((p, i, all) => all.findIndex((q) => q.headEnd === p.headEnd) === i);
    expect(heads.map((p) => p.headEnd)).toContain('message-closed');
    for (const prefix of heads) {
      await storePrefix(redis, prefix);
      const sab = await loadPrefix(redis, prefix.sha256);
      expect(readFrozenHeader(sab)).toMatchObject({ sha256: prefix.sha256, headEnd: prefix.headEnd });
    }
  });

  it('says what is wrong: a missing key, a head end it does not know, bytes that do not hash to the job', async () => {
    const prefix = freeze(bigSnapshot('store-errors:'), { provider: 'dashscope', layout: 'qwen' });
    await expect(loadPrefix(redis, prefix.sha256)).rejects.toThrow(/is not in Redis \(forkcache:prefix:\w+ is missing/);
    await storePrefix(redis, prefix);
    await redis.hset(prefixKey(prefix.sha256), 'headEnd', 'tail-open');
    await expect(loadPrefix(redis, prefix.sha256)).rejects.toThrow(
      `has head end "tail-open", not one of ${HEAD_ENDS.join(', ')}`,
    );
    await redis.hset(prefixKey(prefix.sha256), { headEnd: prefix.headEnd, head: Buffer.from('forged') });
    await expect(loadPrefix(redis, prefix.sha256)).rejects.toThrow(/hashes to \w+, not/);
  });
});
