import type { ProviderId } from '../wire/providers.ts';
import type { ForkChild } from '../fork/layouts.ts';
import type { TurnRetryOptions } from '../loop/retry.ts';
import type { CacheTtl } from '../wire/cache.ts';
import type { ToolLimits } from '../tools/limits.ts';
import type { PermissionPolicy } from '../tools/permissions.ts';
import type { SharedAdmission } from './shared-gate.ts';
import type { LoopPrompt } from '../loop/types.ts';
import type { ForkCheckSpec } from '../pool/protocol.ts';

/** Default BullMQ queue of fork jobs. */
export const DEFAULT_QUEUE = 'forkcache-forks';
/** Redis key of a frozen head, content-addressed by its sha256 (a hash: `head`, `headEnd`). */
export const prefixKey = (sha256: string): string => `forkcache:prefix:${sha256}`;
/** Pub/sub channel on which submitters cancel running forks (`{ forkId }`). */
export const cancelChannel = (queue: string): string => `forkcache:${queue}:cancel`;

/**
 * A fork as a BullMQ job. Plain JSON and no secrets: every host takes its API key from its own
 * environment. The frozen head is not in the job, only its hash: hosts load it from Redis once.
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
  /** No secrets here: jobs sit in Redis; each host redacts its own API key. */
  tools: { workspace: string; allow: string[]; limits: Partial<ToolLimits>; sandbox: 'auto' | 'bwrap' | 'none' };
  permissions: PermissionPolicy;
  transcriptPath: string | undefined;
}

/** What a host reports through `job.updateProgress` (BullMQ carries it to QueueEvents). */
export type ForkJobProgress = { hostId: string; event?: import('../loop/types.ts').LoopEvent };
