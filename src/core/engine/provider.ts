import type Anthropic from '@anthropic-ai/sdk';
import type { Clock } from '../util/clock.ts';
import type { UsageInput } from '../ledger/usage.ts';
import type { EngineSlots } from '../ledger/engine-figures.ts';
import type { ApiEndpoint, ForkWire, WirePrefix } from '../loop/transport.ts';
import type { RequestGate } from '../loop/types.ts';
import type { FrozenPrefix } from '../prefix/freeze.ts';
import type { ForkLayout } from '../fork/layouts.ts';
import type { ProviderId, ProviderWire, Readability } from '../wire/providers.ts';
import type { SpendPricing } from '../gate/admission/admission-gate.ts';
import type { ResolvedEngineOptions } from './options.ts';
import type { WarmGate } from './warm-gate.ts';

/**
 * One provider as the engine and the fork loop ask it (issue 46): everything that differs from
 * one provider to the next lives behind this interface, in the provider's own folder under
 * src/providers/<id>/, and core never compares provider ids. The engine gets the adapters as
 * a registry (`ProviderRegistry`): the public entries and the fork worker pass src/providers'
 * registry in, core never imports it.
 */
export interface ProviderAdapter extends ProviderFacts, ProviderWire {
  readonly id: ProviderId;
  /** One fork's wire in a worker: its request bodies (the frozen head plus the child's suffix) and its transport. */
  openForkWire(api: ApiEndpoint, prefix: WirePrefix): ForkWire;
  /**
   * A fork's request body on this provider (`wire: 'responses'`: OpenAI's Responses API), without
   * a transport: the frozen head's bytes plus the child's suffix in the wire's format. `cacheKey`:
   * the `prompt_cache_key` the run sends (`cacheKeyOf`), on the providers that take one. The
   * worker's wire, the engine's look at a queued fork's first request (the spend cap) and the dry
   * run's byte counts all build it here.
   */
  forkBody(prefix: WirePrefix, wire: ApiEndpoint['wire'], cacheKey: string | undefined): ForkWire['body'];
  /**
   * The engine's own connection to the provider, which its warm-ups and token counts go
   * through. `client`: the Anthropic client an embedder passed (`ForkEngineOptions.client`).
   */
  connect(api: EngineApi, client: Anthropic | undefined): ProviderConnection;
}

/** What the engine, the ledger and the CLI read of a provider, without a request. */
export interface ProviderFacts {
  /**
   * When a request's cache writes become readable by a sibling, which is what the warm-first
   * gate waits for (`Readability`).
   */
  readonly readability: Readability;
  /**
   * The cache reads in whole steps of this many tokens (OpenAI reports hits in 128-token
   * increments, DeepSeek stores prefixes in 64-token units, vLLM caches 16-token blocks; 1: per
   * token). A request can read at most its shared prefix rounded down to the step, which is what
   * the ledger is told it could read (`stepDown`).
   */
  readonly cacheStepTokens: number;
  /** A server the user runs (vLLM, SGLang, llama.cpp): no price, its cost is the compute it does. */
  readonly local: boolean;
  /**
   * The model a demo or economics run uses when none is given: a dated catalogue row for a
   * hosted provider; a local server serves any id (and runs unpriced). Undefined: the CLI's own.
   */
  readonly defaultModel?: string | undefined;
  /**
   * The fork layout of the provider's own agent (Qwen Code's on DashScope), which a demo on the
   * provider shows. Absent: Claude Code's.
   */
  readonly nativeLayout?: ForkLayout | undefined;
  /**
   * The provider warms a fan-out its own way, not with the Chat warm-up of one request of one
   * output token (llama.cpp fills its server's slots: src/providers/llama-cpp/warmup.ts): the
   * dry run's estimate then keeps the plan's `warm` as it stands. Absent: the Chat warm-up.
   */
  readonly ownWarmUp?: boolean | undefined;
}

/** The endpoint as the engine resolved it (ResolvedEngineOptions.api). */
type EngineApi = ResolvedEngineOptions['api'];

/** An engine's connection to its provider (`ProviderAdapter.connect`). */
export interface ProviderConnection {
  /** The same connection with a fan-out's own request headers. */
  withHeaders(headers: Record<string, string>): ProviderConnection;
  /**
   * What a fan-out does before its forks: measure the shared prefix (and the fresh-agent
   * baseline), and warm it as `options.warm` asks. What it leaves for the forks (llama.cpp:
   * the server slots they are pinned to) is the fan-out's engine hooks.
   */
  warmUp(run: FanOutWarmUp): Promise<EngineHooks>;
}

/** What a warm-up records in the fan-out's accounts (FanOutAccounts). */
export interface WarmUpAccounts {
  sharedTokens: number | undefined;
  freshBase: number | undefined;
  warmup(usage: UsageInput, at: number, cachedPrefixTokens?: number): void;
  failedWarmup(at: number): UsageInput | undefined;
  probe(usage: UsageInput, at: number): void;
}

/** What a fan-out does before its forks, and what it records of it. */
export interface FanOutWarmUp {
  options: ResolvedEngineOptions;
  clock: Clock;
  /** A fan-out of fresh agents (`agent`): no fresh-agent baseline to measure for them. */
  agents: boolean;
  prefix: FrozenPrefix;
  forks: number;
  /** The fan-out's id (llama.cpp names its slot files after it). */
  fanOutId: string;
  gate: WarmGate;
  accounts: WarmUpAccounts;
  log: (record: Record<string, unknown>) => void;
  /** `cancel()` stops the token counts and the pre-warm too. */
  signal: AbortSignal;
  /** The spend cap as the fan-out prices it: the warm-up is a request like any other. */
  spend?: SpendPricing | undefined;
  /**
   * Some fork goes on from earlier turns (`resume`), beside a sibling: its next request carries its whole
   * history, and under `first-child` the first to arrive would hold every sibling until its
   * response began. The prefix alone is written first instead (a pre-warm), and the siblings
   * go once it is readable.
   */
  resumed?: boolean;
}

/**
 * What a provider's warm-up leaves for the forks, as the fan-out calls it: on llama.cpp the
 * server slots the forks are pinned to (a request waits for a slot, which its permit names);
 * nothing on the others.
 */
export interface EngineHooks {
  /** The gate a fork's requests pass (llama.cpp: wait for a server slot as well). */
  pin?(forkId: string, gate: RequestGate): RequestGate;
  /** A fork ended: what it held is free. */
  forkEnded?(forkId: string): void;
  /** The fan-out ends, whatever happened (called again after that: nothing more happens). */
  close?(): void;
  /** The summary's `engine.slots` (llama.cpp). */
  readonly slotReport?: EngineSlots | undefined;
}

/** The adapters the engine knows, one per provider id (src/providers/registry.ts). */
export type ProviderRegistry = Readonly<Record<ProviderId, ProviderAdapter>>;
