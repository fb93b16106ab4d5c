import { Job, Queue, QueueEvents } from 'bullmq';
import type { Redis } from 'ioredis';
import { type Clock, systemClock } from '../clock.ts';
import { ForkcacheError, toWireError } from '../errors.ts';
import type { DispatchContext } from '../pool/fork-dispatch.ts';
import type { ForkOutcome } from '../loop/types.ts';
import { readabilityOf } from '../wire/providers.ts';
import { InFlight } from './in-flight.ts';
import { outcomeFromTranscript } from './transcript-outcome.ts';
import { forkJobData } from './job-data.ts';
import {
  CANCEL_KEY_TTL_SECONDS,
  cancelChannel,
  cancelKey,
  DEFAULT_QUEUE,
  DEFAULT_REDIS_TIMEOUT_MS,
  type CancelMessage,
  type DistributedOptions,
} from './keys.ts';
import { connectRedis, shownRedisUrl } from './redis.ts';
import { RedisWatch } from './redis-watch.ts';
import { storePrefix } from './prefix-store.ts';
import { SharedBudget } from './shared-budget.ts';
import { JobSigner, resolveJobSecret, type Signed } from './signing.ts';

export type { DistributedOptions } from './keys.ts';

/**
 * The submitting side of the distributed backend: forks become signed BullMQ jobs on a queue
 * that `forkcache worker` hosts consume. The warm-first barrier stays here (a sibling's job is
 * added only once the first child's cache writes are readable, reported through job
 * progress), and the concurrency limit is BullMQ's global concurrency, across every host.
 *
 * Redis is watched (`RedisWatch`): silent for `redisTimeoutMs`, or back as a restarted server
 * without this run's jobs, it is lost, and every fork in flight ends `failed` (`REDIS_LOST`)
 * with what its transcript says it did; `forkcache resume` continues them.
 */
export class DistributedBackend {
  readonly #queue: Queue<Signed, Signed>;
  readonly #events: QueueEvents;
  readonly #redis: Redis;
  readonly #eventsConnection: Redis;
  readonly #name: string;
  readonly #signer: JobSigner;
  readonly #watch: RedisWatch;
  readonly #concurrency: number;
  readonly #timeoutMs: number;
  readonly #clock: Clock;
  readonly #stop = new AbortController();
  /** When each head was last stored or renewed in Redis (renewed hourly while in use). */
  readonly #stored = new Map<string, number>();
  readonly #jobs = new Map<string, InFlight>();
  #lost: ForkcacheError | undefined;
  #submissions = 0;

  private constructor(parts: {
    name: string;
    queue: Queue<Signed, Signed>;
    events: QueueEvents;
    redis: Redis;
    eventsConnection: Redis;
    signer: JobSigner;
    concurrency: number;
    timeoutMs: number;
    shown: string;
    clock: Clock;
  }) {
    this.#name = parts.name;
    this.#queue = parts.queue;
    this.#events = parts.events;
    this.#redis = parts.redis;
    this.#eventsConnection = parts.eventsConnection;
    this.#signer = parts.signer;
    this.#concurrency = parts.concurrency;
    this.#timeoutMs = parts.timeoutMs;
    this.#clock = parts.clock;
    this.#watch = new RedisWatch(parts.redis, {
      timeoutMs: parts.timeoutMs,
      shown: parts.shown,
      clock: parts.clock,
      onLost: (error) => this.#declareLost(error),
      onReconnect: (restarted) => void this.#reconcile(restarted),
    });
    // one listener each for all jobs, dispatching by job id (not one per fork)
    parts.events.on('progress', ({ jobId, data }: { jobId: string; data: unknown }) => this.#onProgress(jobId, data));
    parts.events.on('completed', ({ jobId, returnvalue }: { jobId: string; returnvalue: unknown }) =>
      this.#jobs.get(jobId)?.settleResult(this.#signer, returnvalue),
    );
    parts.events.on('failed', ({ jobId, failedReason }: { jobId: string; failedReason?: string }) =>
      this.#jobs.get(jobId)?.settleFailed(failedReason),
    );
  }

  static async connect(
    options: DistributedOptions,
    concurrency: number,
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

  /** Resolves with `work`, or rejects once Redis is lost or the backend stopped: nothing waits on a dead Redis. */
  #guard<T>(work: Promise<T>): Promise<T> {
    const signal = this.#stop.signal;
    return new Promise<T>((resolve, reject) => {
      const fail = (): void => reject(this.#lost ?? new ForkcacheError('ENGINE_DESTROYED', 'the backend stopped'));
      if (signal.aborted) return fail();
      signal.addEventListener('abort', fail, { once: true });
      work.then(resolve, reject).finally(() => signal.removeEventListener('abort', fail));
    });
  }

  /** Run one fork on whichever host takes its job; resolves with its outcome. */
  async run(ctx: DispatchContext): Promise<ForkOutcome> {
    const { prefix } = ctx;
    const ended = (): ForkOutcome | undefined => {
      if (this.#lost) return outcomeFromTranscript(ctx, 'failed', this.#lost.toWire());
      if (ctx.abort.signal.aborted)
        return outcomeFromTranscript(ctx, 'cancelled', toWireError(ctx.abort.signal.reason));
      return undefined;
    };
    const early = ended();
    if (early) return early;
    try {
      if (this.#clock.now() - (this.#stored.get(prefix.sha256) ?? -Infinity) > 3_600_000) {
        await this.#guard(storePrefix(this.#redis, prefix));
        this.#stored.set(prefix.sha256, this.#clock.now());
      }
    } catch (err) {
      const stopped = ended();
      if (stopped) return stopped;
      throw err;
    }
    let permit: Awaited<ReturnType<typeof ctx.gate.acquire>>;
    try {
      permit = await ctx.gate.acquire({ turn: 1, first: true, signal: ctx.abort.signal });
    } catch (err) {
      const stopped = ended();
      if (stopped) return stopped;
      throw err;
    }
    let released = false;
    const release = (report?: { status: number }): void => {
      if (released) return;
      released = true;
      permit.release(report);
    };
    const jobId = `${ctx.forkId}.${Date.now()}.${++this.#submissions}`;
    const job = new InFlight(jobId, ctx);
    try {
      const early = ended();
      if (early) return early;
      this.#jobs.set(jobId, job);
      const readable = readabilityOf(prefix.provider);
      job.onEvent = (event) => {
        if (event.type === 'response-start') {
          job.sawStart = true;
          permit.started();
          if (readable !== 'response-end') release();
        } else if (event.type === 'turn-end' && job.sawStart) release({ status: 200 });
        else if (event.type === 'turn-retry' || event.type === 'attempt-failed') release();
      };
      try {
        await this.#guard(
          this.#queue.add('fork', this.#signer.seal('job', jobId, forkJobData(ctx)), {
            jobId,
            attempts: 1,
            removeOnComplete: 1000,
            removeOnFail: 1000,
          }),
        );
      } catch (err) {
        const stopped = ended();
        if (stopped) return stopped;
        throw err;
      }
      const onAbort = (): void => this.#cancel(job);
      ctx.abort.signal.addEventListener('abort', onAbort, { once: true });
      if (ctx.abort.signal.aborted) onAbort(); // cancelled while the job was being added
      void this.#check(job); // it may have finished before the events were listened to
      try {
        return await job.outcome;
      } finally {
        ctx.abort.signal.removeEventListener('abort', onAbort);
      }
    } finally {
      this.#jobs.delete(jobId);
      release(); // a slot held by a job that never ran would stall every sibling
    }
  }

  #onProgress(jobId: string, data: unknown): void {
    const job = this.#jobs.get(jobId);
    const progress = job?.progress(this.#signer, data);
    if (!job || !progress || job.settled) return;
    job.onHost(progress.hostId);
    if (progress.event) {
      job.ctx.onEvent(progress.event);
      job.onEvent(progress.event);
    }
  }

  /**
   * Cancel a job: marked in Redis first, then announced (a host that takes it after the message
   * still sees the mark), then removed if it still waits. With Redis down nobody can be told:
   * the fork ends now, from its transcript (its host stops it once it finds Redis lost).
   */
  #cancel(job: InFlight): void {
    job.cancelRequested = true;
    const reason = toWireError(job.ctx.abort.signal.reason);
    if (this.#lost || !this.#watch.healthy) {
      job.settleFrom('cancelled', {
        ...reason,
        message: `${reason.message} (Redis unreachable: its host was not told)`,
      });
      return;
    }
    const message: CancelMessage = { forkId: job.ctx.forkId, jobId: job.jobId };
    void (async () => {
      await this.#redis.set(cancelKey(this.#name, job.jobId), '1', 'EX', CANCEL_KEY_TTL_SECONDS);
      await this.#redis.publish(cancelChannel(this.#name), JSON.stringify(message));
      // still waiting: removed, it never runs; already running: locked, its host cancels it
      const waiting = await Job.fromId(this.#queue, job.jobId);
      await waiting?.remove();
      job.settleFrom('cancelled', reason);
    })().catch(() => undefined);
  }

  /** Settle a job from its state in Redis, when it finished already or is gone. */
  async #check(job: InFlight): Promise<void> {
    const state = await this.#guard(this.#queue.getJobState(job.jobId)).catch(() => undefined);
    if (state === undefined || job.settled) return;
    if (state === 'unknown') {
      if (job.cancelRequested) job.settleFrom('cancelled', toWireError(job.ctx.abort.signal.reason));
      else
        job.settleFrom('failed', {
          code: 'REDIS_LOST',
          message: `job ${job.jobId} is no longer in Redis (Redis restarted without its data, or the job was deleted)`,
        });
      return;
    }
    if (state !== 'completed' && state !== 'failed') return;
    const finished = await this.#guard(Job.fromId(this.#queue, job.jobId)).catch(() => undefined);
    if (state === 'completed') job.settleResult(this.#signer, finished?.returnvalue);
    else job.settleFailed(finished?.failedReason);
  }

  /**
   * After a reconnect: events may have been missed, and a restarted Redis may be empty. A
   * restart that lost any job of this run loses the run (its prefixes, budget and concurrency
   * limit went with it): every fork ends from its transcript.
   */
  async #reconcile(restarted: boolean): Promise<void> {
    if (restarted) {
      this.#stored.clear();
      const missing = await Promise.all(
        [...this.#jobs.values()].map(async (job) =>
          (await this.#guard(this.#queue.getJobState(job.jobId)).catch(() => undefined)) === 'unknown'
            ? job
            : undefined,
        ),
      );
      const gone = missing.filter((job) => job && !job.cancelRequested).length;
      if (gone > 0) {
        this.#declareLost(
          new ForkcacheError(
            'REDIS_LOST',
            `Redis at ${this.#watch.shown} restarted without its data: ${gone} job(s) of this run are gone`,
            { data: { redis: this.#watch.shown } },
          ),
        );
        return;
      }
      await this.#queue.setGlobalConcurrency(this.#concurrency).catch(() => undefined);
    }
    await Promise.all([...this.#jobs.values()].map((job) => this.#check(job)));
  }

  /** Every `redisTimeoutMs`, look at the jobs in flight: one deleted from Redis would otherwise be waited for forever. */
  async #sweep(): Promise<void> {
    while (!this.#stop.signal.aborted) {
      try {
        await this.#clock.sleep(this.#timeoutMs, this.#stop.signal);
      } catch {
        return;
      }
      if (this.#watch.healthy) await Promise.all([...this.#jobs.values()].map((job) => this.#check(job)));
    }
  }

  #declareLost(error: ForkcacheError): void {
    if (this.#lost) return;
    this.#lost = error;
    this.#stop.abort();
    for (const job of this.#jobs.values()) job.settleFrom('failed', error.toWire());
  }

  /** A new fan-out tries again after a spend-cap stop (it may have been lifted): every host's too. */
  retryAfterStop(modelClass: string): void {
    if (this.#lost) return;
    void new SharedBudget(this.#redis).clearStop(modelClass).catch(() => undefined);
  }

  /** Stop now: every fork in flight ends `cancelled` from its transcript, the connections are cut. */
  async destroy(): Promise<void> {
    this.#stop.abort();
    for (const job of this.#jobs.values())
      job.settleFrom('cancelled', { code: 'ENGINE_DESTROYED', message: 'the engine was destroyed' });
    this.#disconnect();
  }

  /** Close the queue and both Redis connections (BullMQ leaves connections it was given open); never waits on a lost Redis. */
  async close(): Promise<void> {
    if (!this.#stop.signal.aborted && this.#watch.healthy) {
      await this.#guard(Promise.all([this.#events.close(), this.#queue.close()])).catch(() => undefined);
    }
    this.#stop.abort();
    this.#disconnect();
  }

  #disconnect(): void {
    this.#watch.stop();
    this.#redis.disconnect();
    this.#eventsConnection.disconnect();
  }
}
