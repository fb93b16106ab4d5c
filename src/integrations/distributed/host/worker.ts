import { terminalSafeLines } from '../../../core/util/terminal-text.ts';
import { hostname } from 'node:os';
import { Worker } from 'bullmq';
import { ForkcacheError } from '../../../core/util/errors.ts';
import { forkWorkerExecArgv, forkWorkerFile } from '../../../core/pool/worker-file.ts';
import { ThreadPool } from '../../../core/pool/thread-pool.ts';
import { type HostContext, runHostJob } from './job.ts';
import { describePolicy, type HostPolicyOptions } from './policy.ts';
import { probeHostSandbox } from './sandbox.ts';
import { type HostTool, hostToolInfos, parseHostTools } from '../../../core/tools/host-tools.ts';
import { cancelChannel, DEFAULT_QUEUE, DEFAULT_REDIS_TIMEOUT_MS, shownRedisUrl } from '../keys.ts';
import { loadPrefix } from '../store/prefix-store.ts';
import { connectRedis, isAuthError } from '../store/redis.ts';
import { RedisWatch } from '../store/redis-watch.ts';
import { SharedBudget } from '../shared/budget.ts';
import { JobSigner, resolveJobSecret, type Signed } from '../jobs/signing.ts';
import type { Redis } from 'ioredis';
import { cancelFromMessage, jobsGone, runningJobIds, stopJobs } from './running.ts';

export interface HostWorkerOptions extends HostPolicyOptions {
  redis: string;
  queue?: string;
  /** Worker threads of this host's Piscina pool (default 2). */
  threads?: number;
  /** Forks this host runs at once (default threads × 8). */
  concurrency?: number;
  hostId?: string;
  /** BullMQ lock: a host that stops renewing it for this long is presumed dead (default 30 s). */
  lockDurationMs?: number;
  stalledIntervalMs?: number;
  /** The secret jobs are signed with (default `FORKCACHE_JOB_SECRET`; none: the host refuses to start). */
  secret?: string;
  /** Redis silent this long (at most the lock duration): this host stops its forks (default 30 s). */
  redisTimeoutMs?: number;
  /**
   * Host tools this host runs for its jobs' forks (`forkcache worker --host-tools MODULE`): a
   * job whose forks call a tool not registered here is refused, naming it.
   */
  hostTools?: Record<string, HostTool> | undefined;
  /** Where the host says what happens to it (default stderr). */
  log?: (line: string) => void;
}

export interface HostWorker {
  readonly hostId: string;
  /** The ceiling this host holds its jobs to, in words (printed at start). */
  readonly policy: string;
  /** Where jobs' commands run on this host, probed here (printed at start: `bash is NOT sandboxed on this host …` when so). */
  readonly sandbox: string;
  /** Finish the running forks, then stop. */
  close(): Promise<void>;
}

/** What a host runs with: its options, their defaults filled in. */
export interface WorkerSettings {
  hostTools: Record<string, HostTool>;
  policy: HostPolicyOptions;
  queue: string;
  signer: JobSigner;
  hostId: string;
  threads: number;
  lockDuration: number;
  log: (line: string) => void;
  /** The Redis URL as it may be shown (no password). */
  shown: string;
}

/** The settle step: the host's settings, refused before anything connects (no secret, a bad host tool). */
export function workerSettings(options: HostWorkerOptions): WorkerSettings {
  const hostTools = parseHostTools(options.hostTools, 'startHostWorker options');
  const queue = options.queue ?? DEFAULT_QUEUE;
  return {
    hostTools,
    policy: { ...options, registeredTools: hostToolInfos(hostTools) },
    queue,
    signer: new JobSigner(resolveJobSecret(options.secret, 'FORKCACHE_JOB_SECRET'), queue),
    hostId: options.hostId ?? `${hostname()}-${process.pid}`,
    threads: options.threads ?? 2,
    lockDuration: options.lockDurationMs ?? 30_000,
    // a job's fields and a fork's errors reach this log: escaped like everything forkcache prints
    log: options.log ?? ((line: string) => void process.stderr.write(`${terminalSafeLines(line)}\n`)),
    shown: shownRedisUrl(options.redis),
  };
}

/**
 * The connect step: two connections to Redis, one for commands and one subscribed to cancels
 * (a subscribed connection runs nothing else), both ready, or neither left open.
 */
async function connectHost(
  redis: string,
  { hostId, log }: WorkerSettings,
): Promise<{ connection: Redis; subscriber: Redis }> {
  // ioredis reconnects by itself; say once that Redis is unreachable instead of on every retry
  let reported = false;
  const onRedisError = (err: Error): void => {
    if (isAuthError(err)) return; // not retried: startup fails with REDIS_AUTH_FAILED
    if (!reported) log(`forkcache worker ${hostId}: Redis: ${err.message} (retrying)`);
    reported = true;
  };
  const main = connectRedis(redis, onRedisError);
  const sub = connectRedis(redis, onRedisError);
  const connection = main.client;
  const subscriber = sub.client;
  try {
    await Promise.all([main.ready, sub.ready]);
  } catch (err) {
    connection.disconnect();
    subscriber.disconnect();
    throw err;
  }
  connection.on('ready', () => (reported = false));
  return { connection, subscriber };
}

/**
 * Frozen heads by hash, each loaded (and verified) once per host and shared by every fork of
 * that prefix; a load that fails is forgotten, so the next fork tries again.
 */
export function prefixCache(load: (sha256: string) => Promise<SharedArrayBuffer>): HostContext['prefixFor'] {
  const prefixes = new Map<string, Promise<SharedArrayBuffer>>();
  return (sha256) => {
    let sab = prefixes.get(sha256);
    if (!sab) {
      sab = load(sha256);
      prefixes.set(sha256, sab);
      sab.catch(() => prefixes.delete(sha256));
    }
    return sab;
  };
}

/** The run step: BullMQ hands this host its jobs, each run by `runHostJob`; a lock it lost stops that job's fork. */
function takeJobs(host: HostContext, options: HostWorkerOptions, settings: WorkerSettings): Worker<Signed, Signed> {
  const worker = new Worker<Signed, Signed>(host.queue, (job) => runHostJob(job, host), {
    connection: host.connection,
    concurrency: options.concurrency ?? settings.threads * 8,
    lockDuration: settings.lockDuration,
    stalledInterval: options.stalledIntervalMs ?? 15_000,
    maxStalledCount: 3,
  });
  worker.on('error', () => undefined); // Redis errors are the watch's to report, once
  worker.on('lockRenewalFailed', (jobIds: string[]) =>
    stopJobs(
      host.running,
      jobIds,
      new ForkcacheError('REDIS_LOST', `the job's lock in Redis could not be renewed: another host may run it now`),
    ),
  );
  return worker;
}

/**
 * The watch step: Redis silent too long, or back without the running jobs, stops their forks
 * (their transcripts keep every complete turn; `forkcache resume` or another host continues them).
 */
function watchRedis(host: HostContext, timeoutMs: number, shown: string): RedisWatch {
  const { connection, hostId, queue, running, log } = host;
  return new RedisWatch(connection, {
    timeoutMs,
    shown,
    onLost: (error) => {
      const ids = runningJobIds(running);
      log(
        `forkcache worker ${hostId}: ${error.message}: stopping its ${ids.length} fork(s) (their transcripts keep every complete turn; \`forkcache resume\` continues them)`,
      );
      stopJobs(running, ids, error);
    },
    onBack: () => log(`forkcache worker ${hostId}: Redis at ${shown} answers again: serving`),
    onReconnect: (restarted) => {
      if (!restarted) return;
      // a restarted Redis may be empty: a fork whose job is gone is no longer this host's
      void jobsGone(connection, queue, running).then(
        (gone) => {
          if (gone.length === 0) return;
          log(
            `forkcache worker ${hostId}: Redis at ${shown} restarted without ${gone.length} running job(s): stopping them`,
          );
          stopJobs(
            running,
            gone,
            new ForkcacheError('REDIS_LOST', `Redis at ${shown} restarted without this fork's job`),
          );
        },
        () => undefined,
      );
    },
  });
}

/**
 * A host of the distributed backend: a BullMQ worker in front of a local Piscina pool. It
 * loads each frozen head from Redis once into its own SharedArrayBuffer (hash verified) and
 * serves every fork of that prefix from it. A fork whose host died is picked up here from its
 * transcript (BullMQ's stalled-job handling): finished forks are not run again.
 *
 * When Redis is lost (silent for `redisTimeoutMs`), restarts without a running job, or the
 * job's lock could not be renewed, this host's copy of the fork stops (its transcript keeps
 * every complete turn): the job is no longer this host's, and `resume` or another host
 * continues it, never two at once. The host keeps serving once Redis answers again.
 */
export async function startHostWorker(options: HostWorkerOptions): Promise<HostWorker> {
  const settings = workerSettings(options);
  const { hostId, queue, policy, lockDuration } = settings;
  const { connection, subscriber } = await connectHost(options.redis, settings);
  const pool = new ThreadPool({
    filename: forkWorkerFile(),
    execArgv: forkWorkerExecArgv(),
    minThreads: 1,
    maxThreads: settings.threads,
    concurrentTasksPerWorker: 8,
    maxQueue: Infinity,
  });
  const running: HostContext['running'] = new Set();
  await subscriber.subscribe(cancelChannel(queue));
  subscriber.on('message', (_channel: string, text: string) => cancelFromMessage(running, text));

  const sandbox = probeHostSandbox(options);
  const host: HostContext = {
    hostId,
    queue,
    pool,
    connection,
    signer: settings.signer,
    policy,
    facts: sandbox.facts,
    sandboxFor: sandbox.sandboxFor,
    hostTools: settings.hostTools,
    budget: new SharedBudget(connection),
    prefixFor: prefixCache((sha256) => loadPrefix(connection, sha256)),
    running,
    log: settings.log,
  };
  const worker = takeJobs(host, options, settings);
  // past the lock duration another host may take the job: stop before that
  const timeoutMs = Math.min(options.redisTimeoutMs ?? DEFAULT_REDIS_TIMEOUT_MS, lockDuration);
  const watch = watchRedis(host, timeoutMs, settings.shown);
  await worker.waitUntilReady();
  await watch.start();
  return {
    hostId,
    policy: describePolicy(policy),
    sandbox: sandbox.line,
    async close() {
      watch.stop();
      await worker.close();
      await pool.close();
      subscriber.disconnect();
      connection.disconnect();
    },
  };
}
