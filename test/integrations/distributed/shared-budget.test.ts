import RedisMock from 'ioredis-mock';
import type { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/util/clock.ts';
import { SharedBudget } from '../../../src/integrations/distributed/shared/budget.ts';
import { sharedAdmissionGate } from '../../../src/integrations/distributed/shared/gate.ts';
import type { RateLimitHeaders } from '../../../src/core/rate-limits/headers.ts';

// No redis-server is needed: ioredis-mock runs the same Lua scripts (fengari) in memory.
const clients: Redis[] = [];
afterEach(() => {
  for (const c of clients.splice(0)) c.disconnect();
});

/** Two hosts: each its own gate and client, one Redis. */
function hosts(clock: ManualClock) {
  const redis = new RedisMock() as unknown as Redis;
  clients.push(redis);
  const admission = { modelClass: `opus-5-${Math.random()}`, tokensPerByte: 0.25, readsShared: true };
  const budget = new SharedBudget(redis);
  return {
    budget,
    admission,
    a: sharedAdmissionGate(budget, admission, clock),
    b: sharedAdmissionGate(new SharedBudget(redis), admission, clock),
  };
}

const limits = (rpm: [number, number]): RateLimitHeaders => ({
  requests: { limit: rpm[0], remaining: rpm[1], resetAt: undefined },
  'input-tokens': { limit: 2_000_000, remaining: 2_000_000, resetAt: undefined },
});
const flush = async (): Promise<void> => {
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
};
const cost = { bytes: 4000, freshBytes: 400, maxTokens: 1000 };

describe('the rate-limit budget shared by the hosts of the distributed backend (Redis)', () => {
  it('what one host learns and spends, the other sees: the RPM bucket is one for both', async () => {
    const clock = new ManualClock(1_000_000);
    const { a, b, budget, admission } = hosts(clock);
    const first = await a.acquire({ turn: 1, first: true, cost });
    first.started({ status: 200, rateLimits: limits([2, 1]) }); // 2 a minute, 1 left
    first.release({
      status: 200,
      rateLimits: limits([2, 1]),
      usage: { input_tokens: 100, cache_creation_input_tokens: 0, cache_read_input_tokens: 900, output_tokens: 10 },
    });
    await flush();
    expect(await budget.read(admission.modelClass)).toMatchObject({ 'requests:limit': '2' });
    await b.acquire({ turn: 1, first: true, cost }); // the last request of the minute, on the other host
    let admitted = false;
    void a.acquire({ turn: 2, first: false, cost }).then(() => (admitted = true));
    await flush();
    expect(admitted).toBe(false);
    for (let i = 0; i < 30 && !admitted; i++) {
      clock.advance(1_000);
      await flush();
    }
    expect(admitted).toBe(true);
    expect(clock.now() - 1_000_000).toBeGreaterThanOrEqual(29_000); // half a minute for one request at 2 a minute
  });

  it('a 429 on one host holds every host for its retry-after; the spend cap stops them all until cleared', async () => {
    const clock = new ManualClock(1_000_000);
    const { a, b, budget, admission } = hosts(clock);
    (await a.acquire({ turn: 1, first: true, cost })).release({
      status: 429,
      retryAfterMs: 5_000,
      errorType: 'rate_limit_error',
    });
    await flush();
    let admitted = false;
    void b.acquire({ turn: 1, first: true, cost }).then(() => (admitted = true));
    for (let i = 0; i < 4; i++) {
      clock.advance(1_000);
      await flush();
    }
    expect(admitted).toBe(false);
    clock.advance(1_000);
    await flush();
    expect(admitted).toBe(true);

    (await a.acquire({ turn: 2, first: false, cost })).release({
      status: 429,
      errorType: 'rate_limit_error',
      errorCode: 'enforced_spend_limit_reached',
    });
    await flush();
    await expect(b.acquire({ turn: 2, first: false, cost })).rejects.toMatchObject({ code: 'RATE_LIMIT_SPEND_CAP' });
    await budget.clearStop(admission.modelClass);
    await b.acquire({ turn: 2, first: false, cost });
  });
});
