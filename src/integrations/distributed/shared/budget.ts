/** Redis key of one model class's shared rate-limit budget (a hash). */
const budgetKey = (modelClass: string): string => `forkcache:budget:${modelClass}`;

// One hash per model class: `<kind>:limit`, `<kind>:level`, `<kind>:at` for kind in requests,
// input, output; `blocked` (the global backoff, epoch ms) and `stopped` (the spend cap).
// Every script refills a bucket before it reads it, so the level is the same arithmetic as
// TokenBucket's, shared by every host: capacity = the per-minute limit, refilled continuously.
const REFILL = `
local function level(key, kind, now)
  local limit = tonumber(redis.call('HGET', key, kind .. ':limit') or '0')
  if limit <= 0 then return nil, 0 end
  local l = tonumber(redis.call('HGET', key, kind .. ':level') or tostring(limit))
  local at = tonumber(redis.call('HGET', key, kind .. ':at') or tostring(now))
  if now > at then l = math.min(limit, l + (now - at) * limit / 60000) end
  return l, limit
end
`;

/** Reserve one request: 0 when admitted (levels spent), -1 when stopped, else ms to wait. */
const RESERVE = `${REFILL}
local key, now = KEYS[1], tonumber(ARGV[1])
local need = { requests = 1, input = tonumber(ARGV[2]), output = tonumber(ARGV[3]) }
if redis.call('HGET', key, 'stopped') then return -1 end
local wait = math.max(0, tonumber(redis.call('HGET', key, 'blocked') or '0') - now)
local levels = {}
for _, kind in ipairs({ 'requests', 'input', 'output' }) do
  local l, limit = level(key, kind, now)
  if l then
    levels[kind] = l
    local n = math.min(need[kind], limit)
    if l < n then wait = math.max(wait, math.ceil((n - l) * 60000 / limit)) end
  end
end
if wait > 0 then return wait end
for kind, l in pairs(levels) do redis.call('HSET', key, kind .. ':level', tostring(l - need[kind]), kind .. ':at', tostring(now)) end
return 0
`;

/** Spend (or refund, negative) tokens of one kind: the settlement of a reservation from usage. */
const ADJUST = `${REFILL}
local key, now, kind, delta = KEYS[1], tonumber(ARGV[1]), ARGV[2], tonumber(ARGV[3])
local l, limit = level(key, kind, now)
if l then redis.call('HSET', key, kind .. ':level', tostring(math.min(limit, l - delta)), kind .. ':at', tostring(now)) end
return 0
`;

/** Learn a limit and what the API says is left: the lower of the shared level and the API's. */
const LEARN = `${REFILL}
local key, now, kind, limit, seen = KEYS[1], tonumber(ARGV[1]), ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local old = tonumber(redis.call('HGET', key, kind .. ':limit') or '0')
local l = nil
if old == limit then l = level(key, kind, now) end
if l == nil then l = limit end
redis.call('HSET', key, kind .. ':limit', tostring(limit), kind .. ':level', tostring(math.min(l, seen)), kind .. ':at', tostring(now))
return 0
`;

const BACKOFF = `
local current = tonumber(redis.call('HGET', KEYS[1], 'blocked') or '0')
if tonumber(ARGV[1]) > current then redis.call('HSET', KEYS[1], 'blocked', ARGV[1]) end
return 0
`;

const KIND = { requests: 'requests', 'input-tokens': 'input', 'output-tokens': 'output' } as const;

/**
 * The Redis commands the budget sends (an ioredis client has them). Named here rather than
 * imported: this class is in the published types, and ioredis is an optional peer a program
 * compiled without it must not need (`skipLibCheck: false`).
 */
interface BudgetRedis {
  eval(script: string, numKeys: number, ...args: string[]): Promise<unknown>;
  hset(key: string, field: string, value: string): Promise<unknown>;
  hdel(key: string, field: string): Promise<unknown>;
  hgetall(key: string): Promise<Record<string, string>>;
}

/**
 * The rate-limit budget of one API key, shared by every host of the distributed backend in
 * Redis: token buckets per model class, the one global backoff and the spend-cap stop, each
 * changed by one Lua script (atomic, so two hosts never spend the same tokens).
 */
export class SharedBudget {
  readonly #redis: BudgetRedis;

  constructor(redis: BudgetRedis) {
    this.#redis = redis;
  }

  /** 0: admitted; 'stopped': the spend cap holds; otherwise ms to wait before asking again. */
  async reserve(modelClass: string, cost: { itpm: number; otpm: number }, now: number): Promise<number | 'stopped'> {
    const result = Number(
      await this.#redis.eval(RESERVE, 1, budgetKey(modelClass), String(now), String(cost.itpm), String(cost.otpm)),
    );
    return result < 0 ? 'stopped' : result;
  }

  async adjust(modelClass: string, kind: keyof typeof KIND, delta: number, now: number): Promise<void> {
    if (delta !== 0) await this.#redis.eval(ADJUST, 1, budgetKey(modelClass), String(now), KIND[kind], String(delta));
  }

  /** `seen`: the API's remaining plus what refilled since the request was admitted. */
  async learn(modelClass: string, kind: keyof typeof KIND, limit: number, seen: number, now: number): Promise<void> {
    await this.#redis.eval(
      LEARN,
      1,
      budgetKey(modelClass),
      String(now),
      KIND[kind],
      String(limit),
      String(Math.min(limit, seen)),
    );
  }

  async backoff(modelClass: string, until: number): Promise<void> {
    await this.#redis.eval(BACKOFF, 1, budgetKey(modelClass), String(Math.ceil(until)));
  }

  async stop(modelClass: string): Promise<void> {
    await this.#redis.hset(budgetKey(modelClass), 'stopped', '1');
  }

  /** A new fan-out (or a resume) tries again after a spend-cap stop. */
  async clearStop(modelClass: string): Promise<void> {
    await this.#redis.hdel(budgetKey(modelClass), 'stopped');
  }

  /** The stored limits and levels (for tests and the board). */
  async read(modelClass: string): Promise<Record<string, string>> {
    return this.#redis.hgetall(budgetKey(modelClass));
  }
}
