import type Anthropic from '@anthropic-ai/sdk';
import type OpenAI from 'openai';
import type { LimitFunction } from 'p-limit';
import type { Piscina } from 'piscina';
import type { Clock } from '../clock.ts';
import type { ForkChild } from '../fork/layouts.ts';
import type { UsageLedger } from '../ledger/ledger.ts';
import type { LedgerSummary } from '../ledger/summary.ts';
import type { ForkOutcome } from '../loop/types.ts';
import type { FrozenPrefix } from '../prefix/freeze.ts';
import type { ExecutableToolName } from '../tools/names.ts';
import type { PermissionHandler } from '../tools/permissions.ts';
import type { StartPoint } from './fork-attempts.ts';
import type { DispatchContext } from './fork-dispatch.ts';
import type { FanOutEvent, ForkHandle, ForkResult } from './fork-handle.ts';
import type { ResolvedEngineOptions } from './options.ts';
import type { AdmissionScheduler } from '../gate/admission/scheduler.ts';

/** The JSON summary of a fan-out: the ledger's, plus the prefix and where the run lives. */
export interface FanOutSummary extends LedgerSummary {
  prefix: { id: string; sha256: string; bytes: number; approx_tokens: number; shared_tokens: number | null; drift_events: number; source: 'parent' | 'fallback' };
  warmups: number;
  run_dir: string | undefined;
  /**
   * Rate limits met by this fan-out: 429s (of which ramp and spend-cap), 529s, and `stopped`
   * when the spend cap ended admission (the run is resumable once it lifts).
   */
  rate_limits: { admission: 'on' | 'off'; http_429: number; http_529: number; ramp_limit_exceeded: number; spend_limit_reached: number; stopped: string | null };
}

export interface FanOutResult {
  fanoutId: string;
  forks: ForkResult[];
  summary: FanOutSummary;
}

/** A running fan-out. Iterate it (or `events`) for progress; `settled()` for the results. */
export interface FanOut extends AsyncIterable<FanOutEvent> {
  readonly id: string;
  readonly prefix: FrozenPrefix;
  readonly forks: readonly ForkHandle[];
  readonly events: AsyncIterable<FanOutEvent>;
  settled(): Promise<FanOutResult>;
  /**
   * Resolves once the shared prefix is in the cache (the warm-up's or first child's response
   * has begun), or when the fan-out is over: a parent that waits for it before its own next
   * request reads the children's prefix instead of writing it a second time.
   */
  warm(): Promise<void>;
  /** Cancel every fork that has not finished. */
  cancel(): void;
}

export interface FanOutDeps {
  options: ResolvedEngineOptions;
  pool: Piscina;
  /** Fork tasks in flight at most (threads × tasks per thread): the queue in front of the pool. */
  slots: LimitFunction;
  /** API requests in flight at most, shared by every fan-out of the engine. */
  api: LimitFunction;
  /** The engine's rate-limit admission (one budget for every fan-out and thread). */
  admission: AdmissionScheduler;
  /** The model class of a model id (the catalogue's family: the API's rate-limit bucket). */
  modelClass(model: string): string;
  client: Anthropic;
  /** The Chat Completions client of a fan-out on another provider (its warm-up goes through it). */
  chatClient?: OpenAI | undefined;
  ledger: UsageLedger;
  clock: Clock;
  rootId: string;
  runDir: string | undefined;
  onPermission: PermissionHandler | undefined;
  /**
   * `fork` (default): children share the parent's prefix. `fresh`: agents of an explicit type,
   * with their own system prompt and tools, sharing nothing (recorded as such in the ledger).
   */
  agent?: { kind: 'fresh'; type: string; allow: readonly ExecutableToolName[] } | undefined;
  /** Forks start in the foreground (their caller waits for them). */
  foreground?: boolean | undefined;
  /** The distributed backend: forks run as BullMQ jobs on other hosts instead of the local pool. */
  remote?: { run(ctx: DispatchContext): Promise<ForkOutcome>; retryAfterStop?(modelClass: string): void } | undefined;
}

/** One fork of a fan-out: its directive, its base continuation, where it starts. */
export interface ForkSpec {
  directive: string;
  base: ForkChild;
  start: StartPoint;
  /** Set when a resumed fork needs no more requests. */
  finished?: ForkOutcome | undefined;
}

/** Fork ids are stable: the fan-out id and the fork's position (`fo001-ab12cd34-f03`). */
export function forkIdOf(fanoutId: string, index: number): string {
  return `${fanoutId}-f${String(index + 1).padStart(2, '0')}`;
}

export function emptyOutcome(status: ForkOutcome['status'], error: ForkOutcome['error']): ForkOutcome {
  return { status, turns: 0, toolCalls: 0, requests: [], finalText: '', report: undefined, messages: [], filesChanged: [], error };
}
