/*
 * Cache continuity for a parent imported from a session transcript: the session paid for a
 * cached prefix of N tokens (its last request's cache read + write); a fork's first request
 * should read nearly all of it. Fed the fan-out's events, it reports what each fork's first
 * request actually read.
 */
export class CacheContinuity {
  private readonly firstReads = new Map<string, number>();

  constructor(private readonly expected: number | undefined) {}

  /** Feed every fan-out event; only each fork's first `turn-end` counts. */
  onEvent(event: {
    type: string;
    forkId?: string;
    turn?: number;
    request?: { usage?: { cache_read_input_tokens?: number | null } };
  }): void {
    if (event.type !== 'turn-end' || event.turn !== 1 || !event.forkId || this.firstReads.has(event.forkId)) return;
    this.firstReads.set(event.forkId, event.request?.usage?.cache_read_input_tokens ?? 0);
  }

  /** `min` over the forks' first requests, and its share of the expected tokens. */
  result(): { expected: number | undefined; minRead: number | undefined; forks: number; share: number | undefined } {
    const reads = [...this.firstReads.values()];
    const minRead = reads.length > 0 ? Math.min(...reads) : undefined;
    const share = this.expected && minRead !== undefined ? minRead / this.expected : undefined;
    return { expected: this.expected, minRead, forks: reads.length, share };
  }

  /** For `--json`: expected tokens, the smallest first-request read, its share, the forks counted. */
  json(): { expected_tokens: number | null; min_first_read: number | null; share: number | null; forks: number } {
    const r = this.result();
    return {
      expected_tokens: r.expected ?? null,
      min_first_read: r.minRead ?? null,
      share: r.share ?? null,
      forks: r.forks,
    };
  }

  line(): string {
    const { expected, minRead, forks, share } = this.result();
    if (expected === undefined) return 'parent cache: the transcript reports no usage, so the cached prefix is unknown';
    if (minRead === undefined)
      return `parent cache: the session should hold ${expected} tokens of this prefix; no fork finished a first request`;
    return `parent cache: the session should hold ${expected} tokens of this prefix; every fork's first request read at least ${minRead} (${(100 * share!).toFixed(1)}%, ${forks} fork(s))`;
  }
}
