import { totalInputTokens, type UsageInput } from '../../ledger/usage.ts';
import { findModel } from '../../models/catalogue.ts';
import type { ForkEndStatus } from '../../util/fork-status.ts';
import type { RequestRecord } from '../../loop/types.ts';
import type { FrozenPrefix } from '../../prefix/freeze.ts';
import { stepDown } from '../../wire/providers.ts';
import type { FanOutDeps } from './types.ts';

/**
 * A fan-out's entries in the ledger. Recording is idempotent per (fork, turn): after a worker
 * died, the transcript is read back and may repeat a turn an event already recorded.
 */
export class FanOutAccounts {
  readonly #deps: FanOutDeps;
  readonly #prefix: FrozenPrefix;
  readonly #recorded = new Map<string, Set<number>>();
  /** Failed attempts recorded, by message id (an event and a transcript may both report one). */
  readonly #failed = new Set<string>();
  /** Exact tokens of the shared prefix (from the API's count), when known. */
  sharedTokens: number | undefined;
  /** A fresh agent's input before its directive (fallback prompt + tools), when known. */
  freshBase: number | undefined;

  constructor(deps: FanOutDeps, prefix: FrozenPrefix) {
    this.#deps = deps;
    this.#prefix = prefix;
  }

  /** What of the shared prefix a request could read (rounded down to the provider's read step). */
  #shared(): { sharedPrefixTokens?: number } {
    return this.sharedTokens === undefined
      ? {}
      : { sharedPrefixTokens: stepDown(this.#deps.provider.cacheStepTokens, this.sharedTokens) };
  }

  /** Turns done before (a resumed fan-out, a restarted worker): part of this tree's usage. */
  previous(
    forkId: string,
    previous: { requests: readonly RequestRecord[]; failedAttempts: readonly RequestRecord[] },
  ): void {
    for (const request of previous.requests) this.request(forkId, request);
    for (const request of previous.failedAttempts) this.failedAttempt(forkId, request);
  }

  /**
   * The pre-warm, under the agent that fans out. `cachedPrefixTokens`: what of the shared
   * prefix was cached when the fan-out began, when the warm-up's own read tells it (Chat
   * Completions: an automatic cache reports no writes, so the parent's usage cannot).
   */
  warmup(usage: UsageInput, at: number, cachedPrefixTokens?: number): void {
    const cached =
      cachedPrefixTokens === undefined
        ? {}
        : { cachedPrefixTokens: stepDown(this.#deps.provider.cacheStepTokens, cachedPrefixTokens) };
    this.#parentRequest(usage, at, { ...this.#shared(), ...cached });
  }

  /**
   * A pre-warm the endpoint billed whose body was cut before its usage arrived (`max_tokens: 0`
   * cannot stream, so no `message_start` told it). What is known: it sent the shared prefix,
   * `sharedTokens` exactly (counted before), and generated nothing. How much of it was read
   * rather than written is not: it is recorded at its dearest, all written for the prefix's
   * lifetime (below the model's minimum cacheable length, all uncached input), an upper bound
   * that is exact when nothing of the prefix was cached before. Nothing when the count failed.
   * Returns the usage recorded.
   */
  failedWarmup(at: number): UsageInput | undefined {
    const total = this.sharedTokens;
    if (total === undefined) return undefined;
    const { ledger } = this.#deps;
    const min = findModel(this.#prefix.snapshot.model, ledger.table)?.minCacheableTokens ?? 0;
    const written = total >= min ? total : 0;
    const long = this.#prefix.ttl === '1h';
    const usage: UsageInput = {
      input_tokens: total - written,
      cache_creation_input_tokens: written,
      cache_read_input_tokens: 0,
      output_tokens: 0,
      cache_creation: {
        ephemeral_5m_input_tokens: long ? 0 : written,
        ephemeral_1h_input_tokens: long ? written : 0,
      },
    };
    this.#parentRequest(usage, at, { ...this.#shared(), attempt: 'failed' });
    return usage;
  }

  /**
   * A request the engine sent to learn how a server behaves (llama.cpp's slot probe): it shares
   * nothing of the prefix (`sharedPrefixTokens: 0`), but the server computed it, so it counts.
   */
  probe(usage: UsageInput, at: number): void {
    this.#parentRequest(usage, at, { sharedPrefixTokens: 0 });
  }

  /** A request the fan-out sent before its forks, under the agent that fans out (kind `warmup`). */
  #parentRequest(
    usage: UsageInput,
    at: number,
    fields: { sharedPrefixTokens?: number; cachedPrefixTokens?: number; attempt?: 'failed' },
  ): void {
    this.#deps.ledger.record({
      forkId: this.#deps.rootId,
      kind: 'warmup',
      turn: 0,
      model: this.#prefix.snapshot.model,
      usage,
      at,
      prefixId: this.#prefix.id,
      ...fields,
    });
  }

  /** Record one request; `at` is when it started on the engine's clock (default: as the worker saw it). */
  request(forkId: string, request: RequestRecord, at: number = request.sentAt): void {
    const seen = this.#recorded.get(forkId) ?? new Set<number>();
    this.#recorded.set(forkId, seen);
    if (seen.has(request.turn)) return;
    seen.add(request.turn);
    const { ledger, agent } = this.#deps;
    const common = this.#common(forkId, request, at);
    if (agent) {
      ledger.record({ ...common, kind: 'fresh' });
      return;
    }
    const first = request.turn === 1;
    const fresh =
      first && this.freshBase !== undefined && this.sharedTokens !== undefined
        ? {
            freshInputTokens: this.freshBase + Math.max(0, totalInputTokens(request.usage) - this.sharedTokens),
            freshHeadTokens: this.freshBase,
          }
        : {};
    ledger.record({ ...common, kind: 'fork', prefixId: this.#prefix.id, ...(first ? this.#shared() : {}), ...fresh });
  }

  /** A billed attempt that failed after its response began (retried, or cancelled). */
  failedAttempt(forkId: string, request: RequestRecord, at: number = request.sentAt): void {
    if (this.#failed.has(request.messageId)) return;
    this.#failed.add(request.messageId);
    const { ledger, agent } = this.#deps;
    const common = { ...this.#common(forkId, request, at), attempt: 'failed' as const };
    ledger.record(agent ? { ...common, kind: 'fresh' } : { ...common, kind: 'fork', prefixId: this.#prefix.id });
  }

  /** What every record of a fork's request carries (the ledger's turns count from 0). */
  #common(forkId: string, request: RequestRecord, at: number) {
    return {
      forkId,
      parentId: this.#deps.rootId,
      turn: request.turn - 1,
      model: this.#prefix.snapshot.model,
      usage: request.usage,
      at,
    };
  }

  status(forkId: string, status: ForkEndStatus): void {
    this.#deps.ledger.setStatus(forkId, status, {
      parentId: this.#deps.rootId,
      kind: this.#deps.agent ? 'fresh' : 'fork',
    });
  }
}
