import type { Usage } from '../../../core/ledger/usage.ts';

/** Why a request read what it read, as the proxy's model of the cache explains it. */
export type MissReason =
  | 'read'
  | 'new_prefix'
  | 'sibling_not_readable'
  | 'marker_too_far_back'
  | 'expired'
  | 'tools_changed'
  | 'system_changed'
  | 'volatile_system_block'
  | 'model_changed'
  | 'messages_changed'
  | 'no_marker_on_shared_prefix'
  | 'below_minimum'
  | 'upstream_miss';

/** A block position, named as the API's error messages name it. */
export interface BlockRef {
  index: number;
  segment: 'tools' | 'system' | 'messages';
  message: number;
  block: number;
  type: string;
  /** `tools.3`, `system.1`, `messages.4.content.0`. */
  path: string;
}

export interface Diagnosis {
  reason: MissReason;
  /** The first block that differs from every earlier request (undefined: all seen before, or nothing shared). */
  firstDiff: BlockRef | undefined;
  /** Blocks shared with earlier requests. */
  sharedBlocks: number;
  /** The request whose prefix this one shares longest. */
  relatedTo: number | undefined;
  /** Tokens the cache rules say it reads (estimated), and tokens it could have read but did not. */
  predictedReadTokens: number;
  missedTokens: number;
  detail: string;
}

export type ThreadKind = 'main' | 'fork' | 'subagent';

/** One exchange through the proxy, as the ledger keeps it (no credentials, no bodies). */
export interface ExchangeRecord {
  seq: number;
  method: string;
  path: string;
  status: number | undefined;
  model: string | undefined;
  stream: boolean;
  /** Arrival at the proxy, forwarding (after any warm-first hold), epoch ms. */
  receivedAt: number;
  sentAt: number;
  /** Time to the first response byte from forwarding, and to the end. */
  ttfbMs: number | undefined;
  durationMs: number | undefined;
  requestId: string | undefined;
  messageId: string | undefined;
  usage: Usage | undefined;
  costUsd: number | null;
  noCacheUsd: number | null;
  session: string | undefined;
  thread: string | undefined;
  kind: ThreadKind | undefined;
  /** A fork's name (its spawning call's description, or its directive). */
  label: string | undefined;
  fanout: string | undefined;
  diagnosis: Diagnosis | undefined;
  /** `diagnostics.cache_miss_reason` from the API, when the client asked for it. */
  apiMissReason: Record<string, unknown> | undefined;
  /** Warm-first: this request warmed an entry, was held until one was readable, or held until the bound. */
  warm: 'warmer' | 'held' | 'timeout' | undefined;
  heldMs: number;
  strippedBilling: boolean;
  /** USD the proxy's fixes saved on this request (estimated counterfactual). */
  savedUsd: { warmFirst: number; stripBilling: number };
  error: string | undefined;
}
