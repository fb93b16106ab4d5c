import { EventEmitter } from 'node:events';
import { BodyBudget } from '../../../core/util/http-body.ts';
import type { Clock } from '../../../core/util/clock.ts';
import type { ModelEntry, ModelCatalogue } from '../../../core/models/catalogue.ts';
import { DiagnosticsLog } from '../cache/diagnostics.ts';
import { CacheStore } from '../cache/store.ts';
import { FaultInjector } from '../faults.ts';
import { IdSource } from '../ids.ts';
import type { LatencyProfile } from '../latency.ts';
import type { ResolvedOptions } from '../options.ts';
import { ScriptRegistry } from '../scripts/registry.ts';
import { BlockTokenCounter } from '../tokens/block-tokens.ts';
import type { ResponseUsage } from '../types.ts';
import { ExchangeLog } from './exchange-log.ts';
import { StatsCollector } from './stats.ts';
import { RateLimiter } from '../rate-limits/limiter.ts';

/** Noun-verb event names, in the order one request emits them. */
export type EmulatorEventName = 'request-start' | 'response-start' | 'request-end';

/**
 * What the emulator tells observers about a messages request.
 * - `request-start`: validated, cache looked up (what it reads is decided), now waiting out its
 *   time to first token. A test that sees two of these knows both requests missed each other.
 * - `response-start`: its response begins (`message_start`); its cache writes are now readable.
 * - `request-end`: the response is complete, or failed (`status` ≥ 400 / `error`).
 */
export interface EmulatorEvent {
  requestId: string;
  messageId?: string;
  stream?: boolean;
  usage?: ResponseUsage;
  /** Time to first token the request waits (ms, emulator clock). */
  ttftMs?: number;
  status?: number;
  error?: string;
}

/** Everything one emulator instance shares between its requests. */
export interface EmulatorCore {
  options: ResolvedOptions;
  clock: Clock;
  profile: LatencyProfile;
  modelTable: ModelCatalogue;
  store: CacheStore;
  diagnostics: DiagnosticsLog;
  counter: BlockTokenCounter;
  scripts: ScriptRegistry;
  faults: FaultInjector;
  ids: IdSource;
  stats: StatsCollector;
  events: EventEmitter;
  /** `logDir`: one JSON file per exchange; undefined when not logging. */
  log: ExchangeLog | undefined;
  rateLimits: RateLimiter;
  /** Request bytes buffered now, over every request (`maxInFlightBodyBytes`). */
  bodies: BodyBudget;
  minCacheable(model: ModelEntry): number;
}

export function createCore(options: ResolvedOptions): EmulatorCore {
  const events = new EventEmitter();
  // Observers are tests and tools; many may listen at once without being a leak.
  events.setMaxListeners(0);
  return {
    options,
    clock: options.clock,
    profile: options.latency,
    modelTable: options.modelTable,
    store: new CacheStore(),
    diagnostics: new DiagnosticsLog(),
    counter: new BlockTokenCounter(options.tokenizer, options.tokenCosts),
    scripts: new ScriptRegistry(options.script, options.scripts),
    faults: new FaultInjector(options.faults, options.seed),
    ids: new IdSource(options.idSeed),
    stats: new StatsCollector(),
    events,
    log: options.logDir === undefined ? undefined : new ExchangeLog(options.logDir, options.maskHeaders),
    rateLimits: new RateLimiter(options.rateLimits, options.clock, options.modelTable),
    bodies: new BodyBudget(options.maxInFlightBodyBytes),
    minCacheable: options.minCacheable,
  };
}
