import { MessageChannel } from 'node:worker_threads';
import { type Job, UnrecoverableError } from 'bullmq';
import type { Redis } from 'ioredis';
import { ForkcacheError, hasCode, toWireError } from '../../../core/util/errors.ts';
import {
  emptyOutcome,
  FRESH_START,
  finishedOutcome,
  mergeOutcome,
  startFields,
  startFromTranscript,
} from '../../../core/pool/fork-attempts.ts';
import { servePort } from '../../../core/pool/port-server.ts';
import { type HostTool, runHostTool } from '../../../core/tools/host-tools.ts';
import { toolError } from '../../../core/tools/result.ts';
import type { ForkTask } from '../../../core/pool/protocol.ts';
import type { ThreadPool } from '../../../core/pool/thread-pool.ts';
import { readTranscript } from '../../../core/run-dir/transcript-reader.ts';
import { type ForkHostReport, type ForkOutcome, type LoopEvent, OPEN_GATE } from '../../../core/loop/types.ts';
import type { SandboxReport } from '../../../core/tools/sandbox/report.ts';
import { abortable } from '../store/abortable.ts';
import { applyHostPolicy, type HostFacts, type HostPolicyOptions, type HostSettings } from './policy.ts';
import { cancelKey, type ForkJobData, type ForkJobProgress, RAN_KEY_TTL_SECONDS, ranKey } from '../keys.ts';
import type { SharedBudget } from '../shared/budget.ts';
import { sharedAdmissionGate } from '../shared/gate.ts';
import type { JobSigner, Signed } from '../jobs/signing.ts';

export interface RunningFork {
  jobId: string;
  forkId: string;
  abort: AbortController;
}

/** What every job of a host shares. */
export interface HostContext {
  hostId: string;
  queue: string;
  pool: Pick<ThreadPool, 'run'>;
  connection: Redis;
  signer: JobSigner;
  policy: HostPolicyOptions;
  /** What the host found on itself at start (its sandbox). */
  facts: HostFacts;
  /** This host's own probe of the sandbox a fork's bash and check run in (undefined: the fork runs no command). */
  sandboxFor(settings: HostSettings): SandboxReport | undefined;
  /** The host tools this host registered: they run here, on the host's main thread. */
  hostTools: Readonly<Record<string, HostTool>>;
  budget: SharedBudget;
  prefixFor(sha256: string): Promise<SharedArrayBuffer>;
  /**
   * Forks running here: cancel messages, a lost Redis and lost locks stop them. A set, not a
   * map by job id: a job whose lock expired (a starved host) may be taken again here while its
   * first run still stops, and a cancel must reach both.
   */
  running: Set<RunningFork>;
  log(line: string): void;
}

/** Why a job is not run: the reason BullMQ records (`CODE: message`), and no retry. */
function refused(host: HostContext, jobId: string, err: unknown): never {
  const wire = toWireError(err);
  host.log(`refused job ${jobId}: ${wire.code}: ${wire.message}`);
  throw new UnrecoverableError(`${wire.code}: ${wire.message}`);
}

/**
 * Run one job on this host, at most once. Nothing of it is used before its signature verifies
 * and the host's own policy allows it (a forged, tampered or replayed job is refused: no file
 * read, no request sent). The job is claimed in Redis before it runs (`ranKey`), and the
 * fork's transcript names it in its `end`: a job that ran already runs nothing again. The
 * fork's cancel handle is registered before the first await, and the cancel mark in Redis is
 * read after it: a cancel is never lost between the two.
 */
export async function runHostJob(job: Job<Signed, Signed>, host: HostContext): Promise<Signed> {
  const jobId = job.id!;
  let data: ForkJobData;
  let settings: HostSettings;
  try {
    data = host.signer.open<ForkJobData>('job', jobId, job.data);
    settings = applyHostPolicy(data, host.policy, host.facts, jobId);
  } catch (err) {
    return refused(host, jobId, err);
  }
  const fork: RunningFork = { jobId, forkId: data.forkId, abort: new AbortController() };
  host.running.add(fork);
  let lost = false;
  try {
    const claim = await claimJob(host, jobId, job.data.sig, data);
    if (typeof claim === 'object') return host.signer.seal('result', jobId, claim); // a dead host's run that ended
    const report: ForkHostReport = { id: host.hostId, sandbox: host.sandboxFor(settings), clamped: settings.clamped };
    if (settings.clamped.length > 0)
      host.log(`job ${jobId}: clamped to this host's ceilings: ${settings.clamped.join('; ')}`);
    const outcome = await runFork(job, jobId, data, settings, report, fork.abort.signal, host);
    // stopped because Redis was lost (or the job's lock): not a cancel anyone asked for; should
    // Redis take the answer, the submitter reads the fork from its transcript (resume continues it)
    const reason: unknown = fork.abort.signal.reason;
    if (hasCode(reason, 'REDIS_LOST')) {
      lost = true;
      throw new UnrecoverableError(`REDIS_LOST: ${(reason as Error).message}`);
    }
    return host.signer.seal('result', jobId, { ...outcome, host: report });
  } finally {
    host.running.delete(fork);
    // the job ran (or failed trying): never again. Lost: another host may continue it
    if (!lost)
      await host.connection
        .set(ranKey(host.queue, jobId), `done:${job.data.sig}`, 'EX', RAN_KEY_TTL_SECONDS)
        .catch(() => undefined);
  }
}

/**
 * Take the job: `fresh` (first run), `retake` (its host died mid-fork: continue it), or the
 * outcome of a retake whose first host ended the fork before it died. A replay is refused.
 */
async function claimJob(
  host: HostContext,
  jobId: string,
  sig: string,
  data: ForkJobData,
): Promise<'fresh' | 'retake' | ForkOutcome> {
  const key = ranKey(host.queue, jobId);
  const set = await host.connection.set(key, `running:${sig}`, 'EX', RAN_KEY_TTL_SECONDS, 'NX');
  // gone between the two (expired): nobody holds it, this host's claim is as good as fresh
  const seen = set === 'OK' ? undefined : ((await host.connection.get(key)) ?? undefined);
  if (seen !== undefined && seen !== `running:${sig}`)
    replayed(
      host,
      jobId,
      seen.startsWith('done:') ? 'Redis records that it ran' : 'Redis records another job under its id',
    );
  const transcript = data.transcriptPath ? readTranscript(data.transcriptPath) : undefined;
  if (!transcript?.endedJobs.includes(jobId)) return seen === undefined ? 'fresh' : 'retake';
  if (seen === undefined) replayed(host, jobId, `its fork's transcript ended it already (${data.transcriptPath})`);
  const start = startFromTranscript(data.base, transcript);
  const end = transcript.end;
  return (
    finishedOutcome(start, transcript) ?? {
      ...mergeOutcome(start, emptyOutcome(end?.status ?? 'failed', end?.error as ForkOutcome['error'])),
      turns: start.turnsDone,
      messages: [...start.child.messages],
    }
  );
}

function replayed(host: HostContext, jobId: string, why: string): never {
  return refused(
    host,
    jobId,
    new ForkcacheError('JOB_REPLAYED', `job ${jobId} ran already (${why}): a replayed job runs nothing`, {
      data: { jobId },
    }),
  );
}

async function runFork(
  job: Job<Signed, Signed>,
  jobId: string,
  data: ForkJobData,
  settings: HostSettings,
  hostReport: ForkHostReport,
  signal: AbortSignal,
  host: HostContext,
): Promise<ForkOutcome> {
  // progress is best effort and never awaited: a Redis hiccup must not hold (or fail) the fork
  const report = (progress: ForkJobProgress): void =>
    void job.updateProgress(host.signer.seal('progress', jobId, progress) as never).catch(() => undefined);
  const transcript = data.transcriptPath ? readTranscript(data.transcriptPath) : undefined;
  let start = FRESH_START(data.base);
  if (transcript && transcript.turns.length > 0) {
    // a host tool of this host's that only reads runs again; one with effects never does
    start = startFromTranscript(data.base, transcript, (name) =>
      data.tools.host?.includes(name) ? host.hostTools[name]?.readOnly === true : undefined,
    );
    const finished = finishedOutcome(start, transcript);
    if (finished && !data.prompt) return finished; // never complete a fork twice
    if (finished) start = { ...start, prompt: data.prompt }; // a retry (once: its prompt clears the end)
  }
  const stopped = (): ForkOutcome =>
    mergeOutcome(start, { ...emptyOutcome('cancelled', toWireError(signal.reason)), turns: start.turnsDone });
  let sab: SharedArrayBuffer;
  try {
    if (await abortable(host.connection.exists(cancelKey(host.queue, jobId)), [signal], () => signal.reason))
      return mergeOutcome(start, {
        ...emptyOutcome('cancelled', new ForkcacheError('FORK_CANCELLED', 'fork cancelled').toWire()),
        turns: start.turnsDone,
      });
    report({ hostId: host.hostId, host: hostReport }); // names this host, and what it applies, at once
    // the submitter's ledger may have missed the turns a dead host did: tell it (it de-duplicates)
    for (const turn of transcript?.turns ?? [])
      report({
        hostId: host.hostId,
        event: { type: 'turn-end', turn: turn.turn, at: Date.now(), request: turn.request },
      });
    sab = await abortable(host.prefixFor(data.prefixSha256), [signal], () => signal.reason);
  } catch (err) {
    if (signal.aborted) return stopped();
    throw err;
  }
  const { port1, port2 } = new MessageChannel();
  // with admission on, every host reserves from the one budget in Redis
  const gate = data.admission ? sharedAdmissionGate(host.budget, data.admission) : OPEN_GATE;
  const server = servePort(
    port1,
    gate,
    signal,
    (event: LoopEvent) => report({ hostId: host.hostId, event }),
    async () => ({ allow: false, reason: 'no one can be asked on a distributed host' }),
    (tool, input, toolUseId) => {
      const handler = settings.tools.host?.some((t) => t.name === tool) ? host.hostTools[tool] : undefined;
      if (!handler)
        return Promise.resolve(toolError('TOOL_UNKNOWN', `no host tool ${JSON.stringify(tool)} on this host`));
      return runHostTool(tool, handler, input, { signal, forkId: data.forkId, toolUseId });
    },
  );
  const onAbort = (): void => port1.postMessage({ t: 'cancel' });
  signal.addEventListener('abort', onAbort, { once: true });
  if (signal.aborted) onAbort();
  const task: ForkTask = {
    kind: 'fork',
    forkId: data.forkId,
    prefix: sab,
    port: port2,
    ...startFields(start),
    api: settings.api,
    loop: settings.loop,
    tools: settings.tools,
    transcriptPath: data.transcriptPath,
    jobId,
    permissions: settings.permissions,
    testHooks: {},
  };
  try {
    const outcome = (await host.pool.run(task, { transferList: [port2] })) as ForkOutcome;
    await server.ended;
    return mergeOutcome(start, outcome);
  } finally {
    signal.removeEventListener('abort', onAbort);
    server.close();
  }
}
