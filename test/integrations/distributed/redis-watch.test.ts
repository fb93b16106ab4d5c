import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/util/clock.ts';
import type { ForkcacheError } from '../../../src/core/util/errors.ts';
import { RedisWatch } from '../../../src/integrations/distributed/store/redis-watch.ts';
import { HAVE_REDIS, REDIS_SERVER, RedisServer } from './cluster.ts';

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

/** Let the watch's tick run, and with a live Redis its PING come back (I/O, not time). */
async function settle(client: Redis, alive = false): Promise<void> {
  for (let i = 0; i < 5; i++) {
    await new Promise((resolve) => setImmediate(resolve));
    if (alive) await client.echo('flush'); // answered after the PING sent before it
  }
}

async function watched(timeoutMs: number) {
  const server = await RedisServer.start();
  const client = new Redis(server.url, { maxRetriesPerRequest: null });
  client.on('error', () => undefined);
  const clock = new ManualClock(1_000_000);
  const events: string[] = [];
  const watch = new RedisWatch(client, {
    timeoutMs,
    shown: server.url,
    clock,
    onLost: (error: ForkcacheError) => events.push(`lost: ${error.code}: ${error.message}`),
    onBack: () => events.push('back'),
    onReconnect: (restarted) => events.push(restarted ? 'restarted' : 'reconnected'),
  });
  cleanup.push(
    () => server.kill(),
    () => client.disconnect(),
    () => watch.stop(),
  );
  await watch.start();
  return { server, client, clock, events, watch };
}

describe.skipIf(!HAVE_REDIS)(`the Redis watch (needs ${REDIS_SERVER})`, () => {
  it('declares Redis lost once no PING was answered for the timeout, and back once one is', async () => {
    const { server, client, clock, events, watch } = await watched(1000);
    for (let i = 0; i < 8; i++) {
      clock.advance(250); // a PING every quarter of the timeout, each answered
      await settle(client, true);
    }
    expect(events).toEqual([]);
    await server.kill();
    for (let i = 0; i < 3; i++) {
      clock.advance(250);
      await settle(client);
    }
    expect(events).toEqual([]); // 750 ms without an answer: not yet
    clock.advance(250);
    await settle(client);
    expect(events).toEqual([
      `lost: REDIS_LOST: Redis at ${server.url} has not answered for 1.0 s (the limit is 1.0 s)`,
    ]);
    expect(watch.healthy).toBe(false);
    await server.restart();
    await new Promise<void>((resolve) => client.once('ready', () => resolve()));
    while (events.length < 3) {
      clock.advance(250);
      await settle(client, true);
    }
    expect(events.slice(1).sort()).toEqual(['back', 'restarted']); // another server process: it may be empty
    expect(watch.healthy).toBe(true);
  });

  it('a tick that wakes late (this process was starved, not Redis) judges nothing', async () => {
    const { server, client, clock, events } = await watched(1000);
    await server.kill(); // no answers from here on
    clock.advance(5000); // one late wake-up, long past the timeout
    await settle(client);
    expect(events).toEqual([]);
    clock.advance(250); // the next tick, on time, does judge
    await settle(client);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatch(/^lost: REDIS_LOST: .* has not answered for 5\.3 s/);
  });
});
