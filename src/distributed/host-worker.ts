import { hostname } from 'node:os';
import { MessageChannel } from 'node:worker_threads';
import { type Job, Worker } from 'bullmq';
import { Piscina } from 'piscina';
import { FRESH_START, finishedOutcome, mergeOutcome, startFromTranscript } from '../pool/fork-attempts.ts';
import { servePort } from '../pool/port-server.ts';
import { isChatProvider } from '../wire/providers.ts';
import { chatEndpointFromEnv } from '../provider/openai/client.ts';
import type { ForkTask } from '../pool/protocol.ts';
import { readTranscript } from '../run-dir/transcript-reader.ts';
import { forkWorkerExecArgv, forkWorkerFile } from '../pool/worker-file.ts';
import { type ForkOutcome, type LoopEvent, OPEN_GATE } from '../loop/types.ts';
import type { ExecutableToolName } from '../wire/tool-names.ts';
import { cancelChannel, DEFAULT_QUEUE, type ForkJobData, type ForkJobProgress } from './keys.ts';
import { loadPrefix } from './prefix-store.ts';
import { connectRedis } from './redis.ts';
import { SharedBudget } from './shared-budget.ts';
import { sharedAdmissionGate } from './shared-gate.ts';

export interface HostWorkerOptions {
  redis: string;
  queue?: string;
  /** Worker threads of this host's Piscina pool (default 2). */
  threads?: number;
  /** Forks this host runs at once (default threads × 8). */
  concurrency?: number;
  /** This host's API key (never in Redis); default ANTHROPIC_API_KEY, or a stand-in for an emulator. */
  apiKey?: string;
  hostId?: string;
  /** BullMQ lock: a host that stops renewing it for this long is presumed dead (default 30 s). */
  lockDurationMs?: number;
  stalledIntervalMs?: number;
}

export interface HostWorker {
  readonly hostId: string;
  /** Finish the running forks, then stop. */
  close(): Promise<void>;
}

/**
 * A host of the distributed backend: a BullMQ worker in front of a local Piscina pool. It
 * loads each frozen head from Redis once into its own SharedArrayBuffer (hash verified) and
 * serves every fork of that prefix from it. A fork whose host died is picked up here from its
 * transcript (BullMQ's stalled-job handling): finished forks are not run again.
 */
export async function startHostWorker(options: HostWorkerOptions): Promise<HostWorker> {
  const queue = options.queue ?? DEFAULT_QUEUE;
  const hostId = options.hostId ?? `${hostname()}-${process.pid}`;
  const threads = options.threads ?? 2;
  const apiKey = options.apiKey || process.env['ANTHROPIC_API_KEY'] || 'no-key';
  const pool = new Piscina({
    filename: forkWorkerFile(),
    execArgv: forkWorkerExecArgv(),
    minThreads: 1,
    maxThreads: threads,
    concurrentTasksPerWorker: 8,
    idleTimeout: 30_000,
  });
  const prefixes = new Map<string, Promise<SharedArrayBuffer>>();
  const running = new Map<string, AbortController>();
  // ioredis reconnects by itself; say once that Redis is unreachable instead of on every retry
  let reported = false;
  const onRedisError = (err: Error): void => {
    if (!reported) process.stderr.write(`forkcache worker ${hostId}: Redis: ${err.message} (retrying)\n`);
    reported = true;
  };
  const main = connectRedis(options.redis, onRedisError);
  const sub = connectRedis(options.redis, onRedisError);
  const connection = main.client;
  const subscriber = sub.client;
  try {
    await Promise.all([main.ready, sub.ready]);
  } catch (err) {
    connection.disconnect();
    subscriber.disconnect();
    await pool.destroy();
    throw err;
  }
  connection.on('ready', () => (reported = false));
  await subscriber.subscribe(cancelChannel(queue));
  subscriber.on('message', (_channel: string, message: string) => {
    try {
      const { forkId } = JSON.parse(message) as { forkId: string };
      running.get(forkId)?.abort(new Error('fork cancelled'));
    } catch {
      // not a forkcache message: ignore
    }
  });

  const budget = new SharedBudget(connection);
  const prefixFor = (sha256: string): Promise<SharedArrayBuffer> => {
    let sab = prefixes.get(sha256);
    if (!sab) {
      sab = loadPrefix(connection, sha256);
      prefixes.set(sha256, sab);
      sab.catch(() => prefixes.delete(sha256));
    }
    return sab;
  };

  const processJob = async (job: Job<ForkJobData, ForkOutcome>): Promise<ForkOutcome> => {
    const data = job.data;
    // progress is best effort: a Redis hiccup must not take the host (and its forks) down
    const report = (event: LoopEvent): Promise<void> =>
      job.updateProgress({ hostId, event } satisfies ForkJobProgress as unknown as object).catch(() => undefined);
    const transcript = data.transcriptPath ? readTranscript(data.transcriptPath) : undefined;
    let start = FRESH_START(data.base);
    if (transcript && transcript.turns.length > 0) {
      start = startFromTranscript(data.base, transcript);
      const finished = finishedOutcome(start, transcript);
      if (finished && !data.prompt) return finished; // never complete a fork twice
      if (finished) start = { ...start, prompt: data.prompt }; // a retry (once: its prompt clears the end)
      // the submitter's ledger may have missed the turns a dead host did: tell it (it de-duplicates)
      for (const turn of transcript.turns)
        await report({ type: 'turn-end', turn: turn.turn, at: Date.now(), request: turn.request });
    }
    await job.updateProgress({ hostId } satisfies ForkJobProgress); // names this host at once
    const sab = await prefixFor(data.prefixSha256);
    const abort = new AbortController();
    running.set(data.forkId, abort);
    const { port1, port2 } = new MessageChannel();
    // with admission on, every host reserves from the one budget in Redis
    const gate = data.admission ? sharedAdmissionGate(budget, data.admission) : OPEN_GATE;
    const server = servePort(
      port1,
      gate,
      abort.signal,
      (event) => void report(event),
      async () => ({ allow: false, reason: 'no one can be asked on a distributed host' }),
    );
    const onAbort = (): void => port1.postMessage({ t: 'cancel' });
    abort.signal.addEventListener('abort', onAbort, { once: true });
    const task: ForkTask = {
      kind: 'fork',
      forkId: data.forkId,
      prefix: sab,
      child: start.child,
      port: port2,
      turnsDone: start.turnsDone,
      ...(start.judgeLast ? { judgeLast: start.judgeLast } : {}),
      ...(start.prompt ? { prompt: start.prompt } : {}),
      // a Chat provider's key comes from its own variable (OPENAI_API_KEY, DASHSCOPE_API_KEY, ...)
      api: {
        ...data.api,
        apiKey:
          options.apiKey ||
          (data.api.provider && isChatProvider(data.api.provider)
            ? chatEndpointFromEnv(data.api.provider).apiKey
            : undefined) ||
          apiKey,
      },
      loop: data.loop,
      tools: {
        workspace: data.tools.workspace,
        allow: data.tools.allow as ExecutableToolName[],
        limits: data.tools.limits,
        sandbox: data.tools.sandbox ?? 'auto',
        secrets: [],
      },
      transcriptPath: data.transcriptPath,
      permissions: data.permissions,
      testHooks: {},
    };
    try {
      const outcome = (await pool.run(task, { transferList: [port2] })) as ForkOutcome;
      await server.ended;
      return mergeOutcome(start, outcome);
    } finally {
      abort.signal.removeEventListener('abort', onAbort);
      running.delete(data.forkId);
      server.close();
    }
  };

  const worker = new Worker<ForkJobData, ForkOutcome>(queue, processJob, {
    connection,
    concurrency: options.concurrency ?? threads * 8,
    lockDuration: options.lockDurationMs ?? 30_000,
    stalledInterval: options.stalledIntervalMs ?? 15_000,
    maxStalledCount: 3,
  });
  await worker.waitUntilReady();
  return {
    hostId,
    async close() {
      await worker.close();
      await pool.close();
      subscriber.disconnect();
      connection.disconnect();
    },
  };
}
