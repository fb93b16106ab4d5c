import { Job, type Queue, type QueueEvents } from 'bullmq';
import type { Redis } from 'ioredis';
import { type WireError, toWireError } from '../../../core/util/errors.ts';
import { InFlight } from './in-flight.ts';
import { CANCEL_KEY_TTL_SECONDS, cancelChannel, cancelKey, type CancelMessage } from '../keys.ts';
import type { JobSigner, Signed } from '../jobs/signing.ts';

/**
 * The submitter's jobs in flight, by id: each settles from its host's signed events, from its
 * state in Redis when an event may have been missed (after a reconnect, on every sweep), or
 * from its transcript when Redis cannot tell.
 */
export class JobTracker {
  readonly #jobs = new Map<string, InFlight>();
  readonly #queue: Queue<Signed, Signed>;
  readonly #redis: Redis;
  readonly #signer: JobSigner;
  readonly #name: string;
  /** Rejects what waits on Redis once the backend cannot go on (its `#guard`). */
  readonly #guard: <T>(work: Promise<T>) => Promise<T>;

  constructor(parts: {
    queue: Queue<Signed, Signed>;
    events: QueueEvents;
    redis: Redis;
    signer: JobSigner;
    name: string;
    guard: <T>(work: Promise<T>) => Promise<T>;
  }) {
    this.#queue = parts.queue;
    this.#redis = parts.redis;
    this.#signer = parts.signer;
    this.#name = parts.name;
    this.#guard = parts.guard;
    // one listener each for all jobs, dispatching by job id (not one per fork)
    parts.events.on('progress', ({ jobId, data }: { jobId: string; data: unknown }) => this.#onProgress(jobId, data));
    parts.events.on('completed', ({ jobId, returnvalue }: { jobId: string; returnvalue: unknown }) =>
      this.#jobs.get(jobId)?.settleResult(this.#signer, returnvalue),
    );
    parts.events.on('failed', ({ jobId, failedReason }: { jobId: string; failedReason?: string }) =>
      this.#jobs.get(jobId)?.settleFailed(failedReason),
    );
  }

  get size(): number {
    return this.#jobs.size;
  }

  add(job: InFlight): void {
    this.#jobs.set(job.jobId, job);
  }

  delete(job: InFlight): void {
    this.#jobs.delete(job.jobId);
  }

  #onProgress(jobId: string, data: unknown): void {
    const job = this.#jobs.get(jobId);
    const progress = job?.progress(this.#signer, data);
    if (!job || !progress || job.settled) return;
    job.onHost(progress.hostId);
    if (progress.host) job.hostReport = progress.host;
    if (progress.event) {
      job.ctx.onEvent(progress.event);
      job.onEvent(progress.event);
    }
  }

  /**
   * Cancel a job: marked in Redis first, then announced (a host that takes it after the message
   * still sees the mark), then removed if it still waits. With Redis down (`reachable` false)
   * nobody can be told now: the fork ends at once, from its transcript; the commands stay
   * queued for a Redis that comes back, and its host stops the fork once it finds Redis lost.
   */
  cancel(job: InFlight, reachable: boolean): void {
    job.cancelRequested = true;
    const reason = toWireError(job.ctx.abort.signal.reason);
    if (!reachable)
      job.settleFrom('cancelled', {
        ...reason,
        message: `${reason.message} (Redis unreachable: its host was not told)`,
      });
    const message: CancelMessage = { forkId: job.ctx.forkId, jobId: job.jobId };
    void (async () => {
      await this.#guard(this.#redis.set(cancelKey(this.#name, job.jobId), '1', 'EX', CANCEL_KEY_TTL_SECONDS));
      await this.#guard(this.#redis.publish(cancelChannel(this.#name), JSON.stringify(message)));
      // still waiting: removed, it never runs; already running: locked, its host cancels it
      const waiting = await this.#guard(Job.fromId(this.#queue, job.jobId));
      if (waiting) await this.#guard(waiting.remove());
      job.settleFrom('cancelled', reason);
    })().catch(() => undefined);
  }

  /** Settle a job from its state in Redis, when it finished already or is gone. */
  async check(job: InFlight): Promise<void> {
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

  checkAll(): Promise<void> {
    return Promise.all([...this.#jobs.values()].map((job) => this.check(job))).then(() => undefined);
  }

  /** How many jobs in flight (not being cancelled) Redis no longer has. */
  async missing(): Promise<number> {
    const states = await Promise.all(
      [...this.#jobs.values()]
        .filter((job) => !job.cancelRequested)
        .map((job) => this.#guard(this.#queue.getJobState(job.jobId)).catch(() => undefined)),
    );
    return states.filter((state) => state === 'unknown').length;
  }

  /** End every job in flight from its transcript (Redis lost, the engine stopped). */
  settleAll(status: 'failed' | 'cancelled', error: WireError): void {
    for (const job of this.#jobs.values()) job.settleFrom(status, error);
  }

  /**
   * The engine stops while cancels still wait on Redis (Ctrl-C as Redis went away, before this
   * process saw its connection close): those forks end cancelled, saying their hosts may not
   * know, rather than with the engine's own reason.
   */
  settleUnconfirmedCancels(): void {
    for (const job of this.#jobs.values()) {
      if (!job.cancelRequested) continue;
      const reason = toWireError(job.ctx.abort.signal.reason);
      job.settleFrom('cancelled', {
        ...reason,
        message: `${reason.message} (Redis did not confirm the cancel: its host may not have been told)`,
      });
    }
  }
}
