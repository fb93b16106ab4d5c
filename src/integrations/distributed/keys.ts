import type { ForkChild } from '../../core/fork/layouts.ts';
import type { ForkTask } from '../../core/pool/protocol.ts';
import type { ToolFlagName } from '../../core/tools/tool-flags.ts';
import type { SharedAdmission } from './shared/gate.ts';

/** The distributed backend of an engine (`ForkEngine` option `distributed`). */
export interface DistributedOptions {
  /** Redis URL, e.g. `redis://127.0.0.1:6379` (a password in it is never printed). */
  redis: string;
  queue?: string;
  /** The secret jobs are signed with, shared with every host. Default: `FORKCACHE_JOB_SECRET`; none: the engine refuses to start. */
  secret?: string;
  /** How long Redis may be unreachable before the run ends (`REDIS_LOST`; resume continues). Default 30 s. */
  redisTimeoutMs?: number;
}

/** Default time Redis may be silent before the submitter ends the run and hosts stop their forks. */
export const DEFAULT_REDIS_TIMEOUT_MS = 30_000;

/** A Redis URL as it may be printed: without its user and password. */
export function shownRedisUrl(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//');
}

/** Default BullMQ queue of fork jobs. */
export const DEFAULT_QUEUE = 'forkcache-forks';
/** Redis key of a frozen head, content-addressed by its sha256 (a hash: `head`, `headEnd`). */
export const prefixKey = (sha256: string): string => `forkcache:prefix:${sha256}`;
/** Pub/sub channel on which submitters cancel running forks (`{ forkId, jobId }`). */
export const cancelChannel = (queue: string): string => `forkcache:${queue}:cancel`;
/**
 * Set before the cancel message is published: a host that takes the job after the message went
 * by (the message is not stored) still sees that it was cancelled, before it sends anything.
 */
export const cancelKey = (queue: string, jobId: string): string => `forkcache:${queue}:cancelled:${jobId}`;
export const CANCEL_KEY_TTL_SECONDS = 24 * 60 * 60;

/** The cancel message on `cancelChannel`. Unsigned: whoever can publish to Redis can delete jobs too. */
export interface CancelMessage {
  forkId: string;
  jobId?: string | undefined;
}

/**
 * A fork as a BullMQ job, stored signed (`signing.ts`: a host refuses it otherwise). Plain JSON
 * and no secrets: every host takes its API key, its endpoint and its policy ceiling from its own
 * configuration (`host-policy.ts`), and checks every field against `job-rules.ts`. The frozen
 * head is not in the job, only its hash: hosts load it from Redis once and check it. Its parts
 * are the worker task's (`ForkTask`) less what only a host holds, so a field added to the task
 * reaches the job's type, and the rule list must give it a rule before anything compiles.
 */
export interface ForkJobData {
  v: 1;
  fanoutId: string;
  forkId: string;
  index: number;
  prefixSha256: string;
  /** The child's continuation before any turn: hosts continue from the transcript when there is one. */
  base: ForkChild;
  /** `provider` absent: a job of an older engine, on the Messages API. Never a key: each host has its own. */
  api: Omit<ForkTask['api'], 'apiKey'>;
  /** Never `output`: the engine refuses an output schema with this backend (a host cannot run the embedder's schema). */
  loop: Omit<ForkTask['loop'], 'output'>;
  /** `resume --retry`: the user turn that restarts a fork that ended not done. */
  prompt?: ForkTask['prompt'];
  /** Rate-limit admission on: the host reserves each request from the budget shared in Redis. */
  admission?: SharedAdmission | undefined;
  /**
   * No secrets here: jobs sit in Redis; each host redacts its own API key, and protects its own
   * directories. `host`: the host tools the forks may call, by name: a host that has not
   * registered every one refuses the job (whether one only reads is the host's own module's word).
   * The tool flags (`tools/tool-flags.ts`) sit here one by one, as `network` always has, and
   * only those turned on (`toolFlagsOn`): absent is off, so a host of an older submitter reads
   * its jobs, and a newer submitter's job that turns no new flag on still runs on an older host.
   */
  tools: Omit<ForkTask['tools'], 'secrets' | 'protect' | 'host' | 'flags'> & {
    [K in ToolFlagName]?: boolean | undefined;
  } & { host?: string[] | undefined };
  permissions: ForkTask['permissions'];
  transcriptPath: ForkTask['transcriptPath'];
}

/** What a host reports through `job.updateProgress` (BullMQ carries it to QueueEvents). */
export type ForkJobProgress = {
  hostId: string;
  event?: import('../../core/loop/types.ts').LoopEvent;
  /** Sent first: what this host applies to the fork (its sandbox, its clamps). */
  host?: import('../../core/loop/types.ts').ForkHostReport;
};

/**
 * Set (if absent) by the host that takes a job, before anything of it runs: `running:<sig>`,
 * then `done:<sig>` once it ended. A job found `done`, or found under another signature, is a
 * replay and runs nothing; `running` is a job whose host died, which another host continues.
 * Whoever writes to Redis can delete it: the fork's transcript, which names the job in its
 * `end`, is the second check (a replay of a job with a run directory is refused either way).
 */
export const ranKey = (queue: string, jobId: string): string => `forkcache:${queue}:ran:${jobId}`;
export const RAN_KEY_TTL_SECONDS = 30 * 24 * 60 * 60;
