import type { Redis } from 'ioredis';
import { ForkcacheError } from '../../../core/util/errors.ts';
import type { CancelMessage } from '../keys.ts';
import type { RunningFork } from './job.ts';

/**
 * The forks running on this host, as what stops them sees them: a cancel message, a lost lock,
 * a lost or restarted Redis. A set, not a map by job id (`HostContext.running` says why).
 */
type Running = ReadonlySet<RunningFork>;

/** Stop every running fork of these jobs, with `error` as the reason. */
export function stopJobs(running: Running, jobIds: readonly string[], error: ForkcacheError): void {
  for (const fork of running) if (jobIds.includes(fork.jobId)) fork.abort.abort(error);
}

/** The jobs of the forks running now, each once. */
export function runningJobIds(running: Running): string[] {
  return [...new Set([...running].map((fork) => fork.jobId))];
}

/**
 * A message on the queue's cancel channel: stop the job it names, or else every run of the
 * fork it names. Anything that is not JSON is not forkcache's and is ignored.
 */
export function cancelFromMessage(running: Running, text: string): void {
  let message: CancelMessage;
  try {
    message = JSON.parse(text) as CancelMessage;
  } catch {
    return; // not a forkcache message
  }
  const cancel = new ForkcacheError('FORK_CANCELLED', 'fork cancelled');
  for (const fork of running)
    if (message.jobId ? fork.jobId === message.jobId : fork.forkId === message.forkId) fork.abort.abort(cancel);
}

/** The running jobs a restarted Redis came back without (it may be empty): no longer this host's. */
export async function jobsGone(connection: Pick<Redis, 'exists'>, queue: string, running: Running): Promise<string[]> {
  const ids = await Promise.all(
    runningJobIds(running).map(async (id) => ((await connection.exists(`bull:${queue}:${id}`)) === 0 ? id : undefined)),
  );
  return ids.filter((id): id is string => id !== undefined);
}
