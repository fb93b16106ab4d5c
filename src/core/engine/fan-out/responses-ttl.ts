import { RESPONSES_CACHE_TTL_MS, type ResponsesCacheTtl } from '../../wire/cache.ts';
import type { ResolvedEngineOptions } from '../options.ts';

/** Turns a fork is assumed to take for the estimate (a limit of 200 is a ceiling, not a habit). */
const ASSUMED_TURNS_PER_FORK = 20;
/** One turn's assumed wall time: the request and the tools it runs. */
const ASSUMED_TURN_MS = 15_000;

/**
 * How long a fan-out is expected to run: its waves (forks over the requests that may run at
 * once) times the turns a fork takes (the smaller of `maxTurns` and 20) times 15 s a turn.
 * A rough figure, on purpose: it only has to say whether the run outlives 30 minutes.
 */
export function expectedFanOutMs(
  options: Pick<ResolvedEngineOptions, 'concurrency' | 'maxThreads' | 'concurrentTasksPerWorker' | 'maxTurns'>,
  forks: number,
): number {
  const parallel = Math.max(1, Math.min(options.concurrency, options.maxThreads * options.concurrentTasksPerWorker));
  const waves = Math.ceil(Math.max(1, forks) / parallel);
  return waves * Math.min(options.maxTurns, ASSUMED_TURNS_PER_FORK) * ASSUMED_TURN_MS;
}

/**
 * The Responses TTL of a fan-out's writes. A hit refreshes an entry, so a fan-out whose forks
 * keep reading its prefix keeps it alive on 30 minutes; what the 12-hour lifetime buys is the
 * gaps: the last waves of a long queue, forks whose own turns are far apart, and a resume
 * within the day. `auto` takes it when the fan-out is expected to outlive 30 minutes
 * (`expectedFanOutMs`); `responsesTtl: '30m' | '12h'` decides it outright.
 */
export function responsesTtlFor(
  options: Pick<
    ResolvedEngineOptions,
    'responsesTtl' | 'concurrency' | 'maxThreads' | 'concurrentTasksPerWorker' | 'maxTurns'
  >,
  forks: number,
): ResponsesCacheTtl {
  if (options.responsesTtl !== 'auto') return options.responsesTtl;
  return expectedFanOutMs(options, forks) > RESPONSES_CACHE_TTL_MS['30m'] ? '12h' : '30m';
}
