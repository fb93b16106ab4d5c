import { type Job, Queue, QueueEvents } from 'bullmq';
import type { Redis } from 'ioredis';
import { ForkcacheError, toWireError } from '../errors.ts';
import { emptyOutcome } from '../pool/fork-attempts.ts';
import type { DispatchContext } from '../pool/fork-dispatch.ts';
import { FORK_QUERY_SOURCE } from '../wire/fork-text.ts';
import type { ForkOutcome } from '../loop/types.ts';
import { cancelChannel, DEFAULT_QUEUE, type ForkJobData, type ForkJobProgress } from './keys.ts';
import { withoutCredentials } from '../provider/headers.ts';
import { connectRedis } from './redis.ts';
import { storePrefix } from './prefix-store.ts';
import { SharedBudget } from './shared-budget.ts';

export interface DistributedOptions {
  /** Redis URL, e.g. `redis://127.0.0.1:6379`. */
  redis: string;
  queue?: string;
}

/**
 * The submitting side of the distributed backend: forks become BullMQ jobs on a queue that
 * `forkcache worker` hosts consume. The warm-first barrier stays here (a sibling's job is
 * added only once the first child's response has begun, reported through job progress), and
 * the concurrency limit is BullMQ's global concurrency, across every host.
 */
export class DistributedBackend {
  readonly #queue: Queue<ForkJobData, ForkOutcome>;
  readonly #events: QueueEvents;
  readonly #redis: Redis;
  readonly #name: string;
  /** When each head was last stored or renewed in Redis (renewed hourly while in use). */
  readonly #stored = new Map<string, number>();
  /** One progress listener for all jobs, dispatching by job id (not one listener per fork). */
  readonly #progress = new Map<string, (progress: ForkJobProgress) => void>();
  #submissions = 0;

  readonly #eventsConnection: Redis;

  private constructor(
    name: string,
    queue: Queue<ForkJobData, ForkOutcome>,
    events: QueueEvents,
    redis: Redis,
    eventsConnection: Redis,
  ) {
    this.#eventsConnection = eventsConnection;
    this.#name = name;
    this.#queue = queue;
    this.#events = events;
    this.#redis = redis;
    // `waitUntilFinished` listens per job: hundreds of forks in flight are expected, not a leak
    events.setMaxListeners(0);
    queue.setMaxListeners(0);
    events.on('progress', ({ jobId, data }: { jobId: string; data: unknown }) =>
      this.#progress.get(jobId)?.(data as ForkJobProgress),
    );
  }

  static async connect(options: DistributedOptions, concurrency: number): Promise<DistributedBackend> {
    const name = options.queue ?? DEFAULT_QUEUE;
    const redis = connectRedis(options.redis);
    const eventsConnection = connectRedis(options.redis);
    try {
      await Promise.all([redis.ready, eventsConnection.ready]);
    } catch (err) {
      redis.client.disconnect();
      eventsConnection.client.disconnect();
      throw err;
    }
    const queue = new Queue<ForkJobData, ForkOutcome>(name, { connection: redis.client });
    const events = new QueueEvents(name, { connection: eventsConnection.client });
    await Promise.all([queue.waitUntilReady(), events.waitUntilReady()]);
    await queue.setGlobalConcurrency(concurrency);
    return new DistributedBackend(name, queue, events, redis.client, eventsConnection.client);
  }

  /** Run one fork on whichever host takes its job; resolves with its outcome. */
  async run(ctx: DispatchContext): Promise<ForkOutcome> {
    const { prefix, deps } = ctx;
    const options = deps.options;
    const agent = deps.agent;
    if (Date.now() - (this.#stored.get(prefix.sha256) ?? 0) > 3_600_000) {
      await storePrefix(this.#redis, prefix);
      this.#stored.set(prefix.sha256, Date.now());
    }
    const cancelled = (): ForkOutcome => emptyOutcome('cancelled', toWireError(ctx.abort.signal.reason));
    let permit: Awaited<ReturnType<typeof ctx.gate.acquire>>;
    try {
      permit = await ctx.gate.acquire({ turn: 1, first: true, signal: ctx.abort.signal });
    } catch (err) {
      if (ctx.abort.signal.aborted) return cancelled();
      throw err;
    }
    if (ctx.abort.signal.aborted) {
      permit.release();
      return cancelled();
    }
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      permit.release();
    };
    const admission = options.admission === 'on' && ctx.shared ? ctx.shared() : undefined;
    const data: ForkJobData = {
      v: 1,
      fanoutId: ctx.forkId.replace(/-f\d+$/, ''),
      forkId: ctx.forkId,
      index: ctx.index,
      prefixSha256: prefix.sha256,
      base: ctx.base,
      // never a credential in Redis: hosts take the key from their own environment
      // under admission the hosts' gates own 429/529 retries: the SDK must not retry on its own
      api: {
        provider: options.api.provider,
        baseURL: options.api.baseURL,
        headers: withoutCredentials(options.api.headers),
        maxRetries: admission ? 0 : options.api.maxRetries,
        timeoutMs: options.api.timeoutMs,
      },
      loop: {
        maxTurns: options.maxTurns,
        maxTokens: options.maxTokens,
        querySource: agent ? `agent:custom:${agent.type}` : FORK_QUERY_SOURCE,
        marker: prefix.childMarker,
        retry: options.turnRetry,
        gateRetries: admission !== undefined,
        requireReport: agent === undefined,
        ...(ctx.check ? { check: ctx.check } : {}),
      },
      ...(ctx.prompt ? { prompt: ctx.prompt } : {}),
      admission,
      tools: {
        workspace: ctx.workspace,
        allow: [...(agent?.allow ?? options.allow)],
        limits: options.toolLimits,
        sandbox: options.sandbox,
      },
      permissions: options.permissions,
      transcriptPath: ctx.transcriptPath,
    };
    let job: Job<ForkJobData, ForkOutcome>;
    try {
      job = await this.#queue.add('fork', data, {
        jobId: `${ctx.forkId}.${Date.now()}.${++this.#submissions}`,
        attempts: 1,
        removeOnComplete: 1000,
        removeOnFail: 1000,
      });
    } catch (err) {
      release(); // a slot held by a job that never existed would stall every sibling
      throw err;
    }
    let host: string | undefined;
    const onProgress = ({ event, hostId }: ForkJobProgress): void => {
      if (hostId !== host) {
        host = hostId;
        ctx.onHost?.(hostId);
      }
      if (!event) return;
      ctx.onEvent(event);
      if (event.type === 'response-start') {
        permit.started();
        release();
      }
    };
    let removed!: () => void;
    const removedWhileWaiting = new Promise<ForkOutcome>((resolve) => (removed = () => resolve(cancelled())));
    const onAbort = (): void => {
      void this.#redis.publish(cancelChannel(this.#name), JSON.stringify({ forkId: ctx.forkId }));
      // still waiting: removed, it never runs; already running: locked, its host cancels it
      job.remove().then(removed, () => undefined);
    };
    this.#progress.set(job.id!, onProgress);
    ctx.abort.signal.addEventListener('abort', onAbort, { once: true });
    if (ctx.abort.signal.aborted) onAbort(); // cancelled while the job was being added
    try {
      return await Promise.race([job.waitUntilFinished(this.#events) as Promise<ForkOutcome>, removedWhileWaiting]);
    } catch (err) {
      if (ctx.abort.signal.aborted) return cancelled();
      return emptyOutcome(
        'failed',
        new ForkcacheError('FORK_WORKER_FAILED', `job ${job.id} failed: ${(err as Error).message}`).toWire(),
      );
    } finally {
      release();
      this.#progress.delete(job.id!);
      ctx.abort.signal.removeEventListener('abort', onAbort);
    }
  }

  /** A new fan-out tries again after a spend-cap stop (it may have been lifted): every host's too. */
  retryAfterStop(modelClass: string): void {
    void new SharedBudget(this.#redis).clearStop(modelClass).catch(() => undefined);
  }

  /** Close the queue and both Redis connections (BullMQ leaves connections it was given open). */
  async close(): Promise<void> {
    await this.#events.close();
    await this.#queue.close();
    this.#redis.disconnect();
    this.#eventsConnection.disconnect();
  }
}
