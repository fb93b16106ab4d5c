import type { ProviderId } from '../wire/providers.ts';
import type { ForkChild } from '../fork/layouts.ts';
import type { TurnRetryOptions } from '../loop/retry.ts';
import type { CacheTtl } from '../wire/cache.ts';
import type { ToolLimits } from '../tools/limits.ts';
import type { PermissionPolicy } from '../tools/permissions.ts';
import type { SharedAdmission } from './shared-gate.ts';
import type { LoopPrompt } from '../loop/types.ts';
import type { ForkCheckSpec } from '../pool/protocol.ts';

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
 * configuration (`host-policy.ts`). The frozen head is not in the job, only its hash: hosts
 * load it from Redis once and check it.
 */
export interface ForkJobData {
  v: 1;
  fanoutId: string;
  forkId: string;
  index: number;
  prefixSha256: string;
  /** The child's continuation before any turn: hosts continue from the transcript when there is one. */
  base: ForkChild;
  /** `provider` absent: a job of an older engine, on the Messages API. */
  api: {
    provider?: ProviderId | undefined;
    baseURL: string;
    headers: Record<string, string>;
    maxRetries: number;
    timeoutMs: number;
  };
  loop: {
    maxTurns: number;
    maxTokens: number;
    querySource: string;
    marker: CacheTtl | false;
    retry: TurnRetryOptions;
    gateRetries?: boolean | undefined;
    requireReport?: boolean | undefined;
    check?: ForkCheckSpec | undefined;
  };
  /** `resume --retry`: the user turn that restarts a fork that ended not done. */
  prompt?: LoopPrompt | undefined;
  /** Rate-limit admission on: the host reserves each request from the budget shared in Redis. */
  admission?: SharedAdmission | undefined;
  /** No secrets here: jobs sit in Redis; each host redacts its own API key. Checked against the host's own ceiling. */
  tools: {
    workspace: string;
    allow: string[];
    limits: Partial<ToolLimits>;
    sandbox: 'auto' | 'bwrap' | 'none';
    /** The sandbox with network access (a host refuses it unless it allows network). */
    network?: boolean | undefined;
    /** Host tools the forks may call (by name): a host that has not registered every one refuses the job. */
    host?: string[] | undefined;
  };
  permissions: PermissionPolicy;
  transcriptPath: string | undefined;
}

/** What a host reports through `job.updateProgress` (BullMQ carries it to QueueEvents). */
export type ForkJobProgress = { hostId: string; event?: import('../loop/types.ts').LoopEvent };
