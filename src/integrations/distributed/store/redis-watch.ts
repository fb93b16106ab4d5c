import type { Redis } from 'ioredis';
import { type Clock, systemClock } from '../../../core/util/clock.ts';
import { ForkcacheError } from '../../../core/util/errors.ts';

interface RedisWatchOptions {
  /** Redis may go this long without answering a PING before it is declared lost. */
  timeoutMs: number;
  /** The URL as it may be shown (no password). */
  shown: string;
  clock?: Clock | undefined;
  /** Once per outage, when Redis has not answered for `timeoutMs` (the error names Redis and the time). */
  onLost(error: ForkcacheError): void;
  /** Redis answered again after it was declared lost. */
  onBack?(): void;
  /**
   * Redis answered again after a reconnect: what was in flight may need checking. `restarted`:
   * it is another server process (another run id), which may have come back without its data.
   */
  onReconnect?(restarted: boolean): void;
}

const seconds = (ms: number): string => `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;

/** The `run_id` of `INFO server`: it changes at every start of redis-server. */
async function runId(client: Redis): Promise<string | undefined> {
  const info = await client.info('server');
  return /^run_id:(\w+)/m.exec(info)?.[1];
}

/**
 * Notices a lost Redis within a bounded time. ioredis reconnects by itself and, for BullMQ,
 * queues commands forever (`maxRetriesPerRequest: null`), so a dead or unreachable Redis
 * looks like silence: nothing fails, nothing ends. This sends a PING every quarter of the
 * timeout (one at a time) and declares Redis lost when none was answered for `timeoutMs`
 * (refused connections, a half-open socket and a stopped server alike), and back when one
 * is answered again. After a reconnect it reads Redis's run id: another one means a restarted
 * server, which may have come back empty.
 */
export class RedisWatch {
  readonly #client: Redis;
  readonly #options: RedisWatchOptions;
  readonly #clock: Clock;
  readonly #stop = new AbortController();
  #lastAnswer: number;
  #pinging = false;
  #runId: string | undefined;
  #lost = false;
  #connected = true;

  constructor(client: Redis, options: RedisWatchOptions) {
    this.#client = client;
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
    this.#lastAnswer = this.#clock.now();
    client.on('close', this.#onClose);
    client.on('ready', this.#onReady);
  }

  /** Read the run id of the server now answering, then watch until `stop()`. */
  async start(): Promise<void> {
    this.#runId = await runId(this.#client);
    this.#lastAnswer = this.#clock.now();
    void this.#loop();
  }

  get shown(): string {
    return this.#options.shown;
  }

  /** Connected now, and not declared lost. */
  get healthy(): boolean {
    return this.#connected && !this.#lost;
  }

  get lost(): boolean {
    return this.#lost;
  }

  stop(): void {
    this.#stop.abort();
    this.#client.off('close', this.#onClose);
    this.#client.off('ready', this.#onReady);
  }

  readonly #onClose = (): void => {
    this.#connected = false;
  };

  readonly #onReady = (): void => {
    if (this.#connected) return;
    this.#connected = true;
    void runId(this.#client).then(
      (id) => {
        this.#answered();
        const restarted = id !== this.#runId;
        this.#runId = id;
        this.#options.onReconnect?.(restarted);
      },
      () => undefined, // the next PING tells
    );
  };

  #answered(): void {
    this.#lastAnswer = this.#clock.now();
    if (!this.#lost) return;
    this.#lost = false;
    this.#options.onBack?.();
  }

  async #loop(): Promise<void> {
    const every = Math.max(10, Math.floor(this.#options.timeoutMs / 4));
    const signal = this.#stop.signal;
    while (!signal.aborted) {
      const due = this.#clock.now() + every;
      try {
        await this.#clock.sleep(every, signal);
        // let answers already in the socket be read first: a busy event loop is not a silent Redis
        await new Promise((resolve) => setImmediate(resolve));
      } catch {
        return; // stopped
      }
      const now = this.#clock.now();
      const silent = now - this.#lastAnswer;
      // a tick that woke late (this process was starved, not Redis) judges nothing: the next one does
      if (silent >= this.#options.timeoutMs && !this.#lost && now - due < every) {
        this.#lost = true;
        this.#options.onLost(
          new ForkcacheError(
            'REDIS_LOST',
            `Redis at ${this.#options.shown} has not answered for ${seconds(silent)} (the limit is ${seconds(this.#options.timeoutMs)})`,
            { data: { redis: this.#options.shown, silentMs: silent } },
          ),
        );
      }
      if (this.#pinging) continue;
      this.#pinging = true;
      this.#client.ping().then(
        () => {
          this.#pinging = false;
          this.#answered();
        },
        () => (this.#pinging = false),
      );
    }
  }
}
