import { setMaxListeners } from 'node:events';
import { Queue, QueueEvents } from 'bullmq';
import type { Redis } from 'ioredis';
import { type Clock, systemClock } from '../../../core/util/clock.ts';
import { ForkcacheError, toWireError } from '../../../core/util/errors.ts';
import type { DispatchContext } from '../../../core/pool/fork-dispatch.ts';
import type { ForkOutcome, GatePermit } from '../../../core/loop/types.ts';
import type { Readability } from '../../../core/wire/providers.ts';
import { abortable } from '../store/abortable.ts';
import { InFlight } from './in-flight.ts';
import { forkJobData } from '../jobs/data.ts';
import { JobTracker } from './job-tracker.ts';
import { DEFAULT_QUEUE, DEFAULT_REDIS_TIMEOUT_MS, type DistributedOptions, shownRedisUrl } from '../keys.ts';
import { connectRedis } from '../store/redis.ts';
import { RedisWatch } from '../store/redis-watch.ts';
import { storePrefix } from '../store/prefix-store.ts';
import { SharedBudget } from '../shared/budget.ts';
import { JobSigner, resolveJobSecret, type Signed } from '../jobs/signing.ts';
import { outcomeFromTranscript } from './transcript-outcome.ts';

interface Parts {
  name: string;
  queue: Queue<Signed, Signed>;
  events: QueueEvents;
  redis: Redis;
  eventsConnection: Redis;
  signer: JobSigner;
  concurrency: number;
  timeoutMs: number;
  shown: string;
  /** When the engine's provider makes a request's cache writes readable (its adapter's `readability`). */
  readable: Readability;
  clock: Clock;
}

/**
 * The submitting side of the distributed backend: forks become signed BullMQ jobs on a queue
 * that `forkcache worker` hosts consume. The warm-first barrier stays here (a sibling's job is
 * added only once the first child's cache writes are readable, as its host reports), and the
 * concurrency limit is BullMQ's global concurrency, across every host.
 *
 * Redis is watched: silent for `redisTimeoutMs`, or back as a restarted server without this
 * run's jobs, it is lost, and every fork in flight ends `failed` (`REDIS_LOST`) with what its
 * transcript says it did, as does every fork after; `forkcache resume` continues them.
 */
export class DistributedBackend {
  readonly #parts: Parts;
  readonly #tracker: JobTracker;
  readonly #watch: RedisWatch;
  readonly #stop = new AbortController();
  /** When each head was last stored or renewed in Redis (renewed hourly while in use). */
  readonly #stored = new Map<string, number>();
  #lost: ForkcacheError | undefined;
  #submissions = 0;

  private constructor(parts: Parts) {
    // every fork in flight waits on Redis through this signal: hundreds of listeners are expected
    setMaxListeners(0, this.#stop.signal);
    this.#parts = parts;
    this.#tracker = new JobTracker({ ...parts, guard: (work) => this.#guard(work) });
    this.#watch = new RedisWatch(parts.redis, {
      timeoutMs: parts.timeoutMs,
      shown: parts.shown,
      clock: parts.clock,
      onLost: (error) => this.#declareLost(error),
      onReconnect: (restarted) => void this.#reconcile(restarted),
    });
  }

  static async connect(
    options: DistributedOptions,
    concurrency: number,
    readable: Readability,
    clock: Clock = systemClock,
  ): Promise<DistributedBackend> {
    const name = options.queue ?? DEFAULT_QUEUE;
    const signer = new JobSigner(resolveJobSecret(options.secret, 'distributed.secret'), name);
    const redis = connectRedis(options.redis);
    const eventsConnection = connectRedis(options.redis);
    try {
      await Promise.all([redis.ready, eventsConnection.ready]);
    } catch (err) {
      redis.client.disconnect();
      eventsConnection.client.disconnect();
      throw err;
    }
    const queue = new Queue<Signed, Signed>(name, { connection: redis.client });
    const events = new QueueEvents(name, { connection: eventsConnection.client });
    await Promise.all([queue.waitUntilReady(), events.waitUntilReady()]);
    await queue.setGlobalConcurrency(concurrency);
    const backend = new DistributedBackend({
      name,
      queue,
      events,
      redis: redis.client,
      eventsConnection: eventsConnection.client,
      signer,
      concurrency,
      timeoutMs: options.redisTimeoutMs ?? DEFAULT_REDIS_TIMEOUT_MS,
      shown: shownRedisUrl(options.redis),
      readable,
      clock,
    });
    await backend.#watch.start();
    void backend.#sweep();
    return backend;
  }

  /** Why Redis is lost, once it is: every fork since ends `REDIS_LOST`. */
  get lost(): ForkcacheError | undefined {
    return this.#lost;
  }

  #guard<T>(work: Promise<T>, signal?: AbortSignal): Promise<T> {
    return abortable(
      work,
      signal ? [this.#stop.signal, signal] : [this.#stop.signal],
      () => this.#lost ?? signal?.reason ?? new ForkcacheError('ENGINE_DESTROYED', 'the backend stopped'),
    );
  }

  /** The outcome of a fork that cannot go on: Redis lost, or cancelled (read from its transcript). */
  #ended(ctx: DispatchContext): ForkOutcome | undefined {
    if (this.#lost) return outcomeFromTranscript(ctx, 'failed', this.#lost.toWire());
    if (ctx.abort.signal.aborted) return outcomeFromTranscript(ctx, 'cancelled', toWireError(ctx.abort.signal.reason));
    return undefined;
  }

  /** Run one fork on whichever host takes its job; resolves with its outcome. */
  async run(ctx: DispatchContext): Promise<ForkOutcome> {
    const { prefix } = ctx;
    let permit: GatePermit;
    try {
      const early = this.#ended(ctx);
      if (early) return early;
      if (this.#parts.clock.now() - (this.#stored.get(prefix.sha256) ?? -Infinity) > 3_600_000) {
        await this.#guard(storePrefix(this.#parts.redis, prefix), ctx.abort.signal);
        this.#stored.set(prefix.sha256, this.#parts.clock.now());
      }
      permit = await ctx.gate.acquire({ turn: 1, first: true, signal: ctx.abort.signal });
    } catch (err) {
      const stopped = this.#ended(ctx);
      if (stopped) return stopped;
      throw err;
    }
    const job = new InFlight(`${ctx.forkId}.${Date.now()}.${++this.#submissions}`, ctx);
    const onAbort = (): void => this.#tracker.cancel(job, !this.#lost && this.#watch.healthy);
    let released = false;
    const release = (report?: { status: number }): void => {
      if (released) return;
      released = true;
      permit.release(report);
    };
    // the warm-first barrier: Anthropic's cache writes are readable once the response began,
    // a Chat provider's once it is complete (its first turn's end), on that host
    const atEnd = this.#parts.readable === 'response-end';
    job.onEvent = (event) => {
      if (event.type === 'response-start') {
        job.sawStart = true;
        permit.started();
        if (!atEnd) release();
      } else if (event.type === 'turn-end' && job.sawStart) release({ status: 200 });
      else if (event.type === 'turn-retry' || event.type === 'attempt-failed') release();
    };
    this.#tracker.add(job);
    ctx.abort.signal.addEventListener('abort', onAbort, { once: true });
    try {
      const early = this.#ended(ctx);
      if (early) return early;
      const data = this.#parts.signer.seal('job', job.jobId, forkJobData(ctx));
      const options = { jobId: job.jobId, attempts: 1, removeOnComplete: 1000, removeOnFail: 1000 };
      await this.#guard(this.#parts.queue.add('fork', data, options), ctx.abort.signal).catch((err: unknown) => {
        if (!this.#ended(ctx)) throw err;
      });
      void this.#tracker.check(job); // it may have finished before the events were listened to
      return await job.outcome;
    } finally {
      ctx.abort.signal.removeEventListener('abort', onAbort);
      this.#tracker.delete(job);
      release(); // a slot held by a job that never ran would stall every sibling
    }
  }

  /**
   * After a reconnect: events may have been missed, and a restarted Redis may be empty. A
   * restart that lost any job of this run loses the run (its prefixes, budget and concurrency
   * limit went with it): every fork ends from its transcript.
   */
  async #reconcile(restarted: boolean): Promise<void> {
    if (this.#lost) return;
    if (restarted) {
      this.#stored.clear();
      const gone = await this.#tracker.missing();
      if (gone > 0) {
        this.#declareLost(
          new ForkcacheError(
            'REDIS_LOST',
            `Redis at ${this.#parts.shown} restarted without its data: ${gone} job(s) of this run are gone`,
            { data: { redis: this.#parts.shown } },
          ),
        );
        return;
      }
      await this.#guard(this.#parts.queue.setGlobalConcurrency(this.#parts.concurrency)).catch(() => undefined);
    }
    await this.#tracker.checkAll();
  }

  /** Every `redisTimeoutMs`, look at the jobs in flight: one deleted from Redis would otherwise be waited for forever. */
  async #sweep(): Promise<void> {
    const { clock, timeoutMs } = this.#parts;
    while (!this.#stop.signal.aborted) {
      try {
        await clock.sleep(timeoutMs, this.#stop.signal);
      } catch {
        return;
      }
      if (this.#watch.healthy && this.#tracker.size > 0) await this.#tracker.checkAll();
    }
  }

  #declareLost(error: ForkcacheError): void {
    if (this.#lost) return;
    this.#lost = error;
    this.#stop.abort();
    this.#tracker.settleAll('failed', error.toWire());
  }

  /** A new fan-out tries again after a spend-cap stop (it may have been lifted): every host's too. */
  retryAfterStop(modelClass: string): void {
    if (this.#lost) return;
    void this.#guard(new SharedBudget(this.#parts.redis).clearStop(modelClass)).catch(() => undefined);
  }

  /** Stop now: every fork in flight ends `cancelled` from its transcript, the connections are cut. */
  async destroy(): Promise<void> {
    this.#stop.abort();
    this.#tracker.settleUnconfirmedCancels();
    this.#tracker.settleAll('cancelled', { code: 'ENGINE_DESTROYED', message: 'the engine was destroyed' });
    this.#disconnect();
  }

  /** Close the queue and both Redis connections (BullMQ leaves connections it was given open); never waits on a lost Redis. */
  async close(): Promise<void> {
    if (!this.#stop.signal.aborted && this.#watch.healthy)
      await this.#guard(Promise.all([this.#parts.events.close(), this.#parts.queue.close()])).catch(() => undefined);
    this.#stop.abort();
    this.#disconnect();
  }

  #disconnect(): void {
    this.#watch.stop();
    // closing marks them closing (QueueEvents would otherwise retry its read on a cut connection forever)
    void this.#parts.events.close().catch(() => undefined);
    void this.#parts.queue.close().catch(() => undefined);
    this.#parts.redis.disconnect();
    this.#parts.eventsConnection.disconnect();
  }
}
