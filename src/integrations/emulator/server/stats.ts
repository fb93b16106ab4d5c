import type { ResponseUsage } from '../types.ts';

/** What `emulator.stats()` and `GET /v1/emulator/stats` report. */
export interface EmulatorStats {
  requests: {
    /** Every HTTP request, whatever the route or outcome. */
    total: number;
    /** `POST /v1/messages` requests whose response began (these are billed). */
    messages: number;
    countTokens: number;
    streaming: number;
    /** Error responses (including injected faults and mid-stream errors). */
    errors: number;
    byStatus: Record<string, number>;
    faults: Record<string, number>;
  };
  tokens: {
    /** Σ input_tokens: input after the last marker, neither read nor written. */
    uncached: number;
    cacheRead: number;
    cacheWrite: number;
    cacheWrite5m: number;
    cacheWrite1h: number;
    output: number;
  };
  cache: {
    /** Live (readable, unexpired) entries now. */
    entries: number;
    /** Messages requests that read from the cache. */
    hits: number;
    /** Messages requests with a cacheable marker that read nothing. */
    misses: number;
    /** Entries written (made readable). */
    writes: number;
    expired: number;
    /** Blocks tokenized so far (memo misses): a repeated prefix is not re-tokenized. */
    tokenizedBlocks: number;
  };
}

/** Mutable counters behind the read-only `stats()` snapshot. */
export class StatsCollector {
  readonly #s: EmulatorStats = {
    requests: { total: 0, messages: 0, countTokens: 0, streaming: 0, errors: 0, byStatus: {}, faults: {} },
    tokens: { uncached: 0, cacheRead: 0, cacheWrite: 0, cacheWrite5m: 0, cacheWrite1h: 0, output: 0 },
    cache: { entries: 0, hits: 0, misses: 0, writes: 0, expired: 0, tokenizedBlocks: 0 },
  };

  request(): void {
    this.#s.requests.total++;
  }

  countTokens(): void {
    this.#s.requests.countTokens++;
  }

  status(status: number): void {
    const key = String(status);
    this.#s.requests.byStatus[key] = (this.#s.requests.byStatus[key] ?? 0) + 1;
    if (status >= 400) this.#s.requests.errors++;
  }

  /** A mid-stream error: the response was 200, but it failed. */
  streamError(): void {
    this.#s.requests.errors++;
  }

  fault(kind: string): void {
    this.#s.requests.faults[kind] = (this.#s.requests.faults[kind] ?? 0) + 1;
  }

  /** A messages response began: its usage is billed from here on. */
  response(usage: ResponseUsage, stream: boolean, eligible: boolean, writes: number): void {
    const { requests, tokens, cache } = this.#s;
    requests.messages++;
    if (stream) requests.streaming++;
    tokens.uncached += usage.input_tokens;
    tokens.cacheRead += usage.cache_read_input_tokens;
    tokens.cacheWrite += usage.cache_creation_input_tokens;
    tokens.cacheWrite5m += usage.cache_creation.ephemeral_5m_input_tokens;
    tokens.cacheWrite1h += usage.cache_creation.ephemeral_1h_input_tokens;
    tokens.output += usage.output_tokens;
    if (usage.cache_read_input_tokens > 0) cache.hits++;
    else if (eligible) cache.misses++;
    cache.writes += writes;
  }

  snapshot(live: { entries: number; expired: number; tokenizedBlocks: number }): EmulatorStats {
    const s = structuredClone(this.#s);
    s.cache.entries = live.entries;
    s.cache.expired = live.expired;
    s.cache.tokenizedBlocks = live.tokenizedBlocks;
    return s;
  }
}
