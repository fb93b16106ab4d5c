import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CacheEntry } from './cache/store.ts';
import { resolveOptions, type EmulatorOptions } from './options.ts';
import { createCore, type EmulatorEvent, type EmulatorEventName } from './server/core.ts';
import { routeOpenAi } from './openai/router.ts';
import { route, statsOf } from './server/router.ts';
import type { EmulatorStats } from './server/stats.ts';
import type { RateLimitTable } from '../../core/rate-limits/presets.ts';

/** A running emulator. */
export interface Emulator {
  /** Base URL for the SDK: `new Anthropic({ baseURL: emulator.url })`. */
  readonly url: string;
  readonly port: number;
  /** Stop accepting, let in-flight requests finish (up to `closeTimeoutMs`), then stop. */
  close(): Promise<void>;
  /** Stop now: in-flight requests are cut off. */
  destroy(): Promise<void>;
  stats(): EmulatorStats;
  /** Observe requests (see `EmulatorEvent`); returns the unsubscribe function. */
  on(event: EmulatorEventName, listener: (event: EmulatorEvent) => void): () => void;
  /** Live cache entries (copies), for tests and debugging. */
  cacheEntries(): CacheEntry[];
  /** Forget every cache entry. */
  clearCache(): void;
  /** The rate limits in force (undefined: none), and the spend cap to change mid-run (a billing change; undefined lifts it). */
  readonly rateLimits: {
    readonly table: RateLimitTable | undefined;
    setSpendLimit(usd: number | undefined): void;
    spent(apiKey: string): number;
  };
}

interface InFlight {
  controller: AbortController;
  done: Promise<void>;
}

async function stopServer(server: Server): Promise<void> {
  if (!server.listening) return;
  const closed = once(server, 'close');
  server.close();
  server.closeIdleConnections();
  await closed;
}

/**
 * Start an Anthropic-compatible Messages API on loopback with the prompt-cache rules.
 *
 * @example
 * const emulator = await startEmulator({ latency: 'off' });
 * const client = new Anthropic({ apiKey: 'test', baseURL: emulator.url, maxRetries: 0 });
 * const message = await client.messages.create({ model: 'claude-opus-5-5', max_tokens: 256, messages });
 * console.log(message.usage, emulator.stats());
 * await emulator.close();
 */
export async function startEmulator(options: EmulatorOptions = {}): Promise<Emulator> {
  const resolved = resolveOptions(options);
  const core = createCore(resolved);
  const inFlight = new Set<InFlight>();

  // Bounded clients, as in the proxy: headers and the whole request must arrive in time (a
  // slowloris otherwise holds its connections), and there is a cap on open connections.
  const server = createServer(
    {
      headersTimeout: resolved.headersTimeoutMs,
      requestTimeout: resolved.requestTimeoutMs,
      connectionsCheckingInterval: resolved.timeoutCheckMs,
    },
    (req, res) => {
      const controller = new AbortController();
      // The client went away before the response ended: stop waiting, write nothing more, and
      // (if the response had not begun) commit no cache writes.
      res.on('close', () => {
        if (!res.writableFinished) controller.abort(new DOMException('client closed the connection', 'AbortError'));
      });
      const entry: InFlight = { controller, done: Promise.resolve() };
      const api = resolved.api;
      const handled =
        api === 'anthropic'
          ? route(core, req, res, controller.signal)
          : routeOpenAi(core, api, req, res, controller.signal);
      entry.done = handled.finally(() => inFlight.delete(entry));
      inFlight.add(entry);
    },
  );
  // A cap on open connections: without one, a flood of idle sockets holds memory and file
  // descriptors without limit (issue 15, case 8). Past it Node closes new sockets at once.
  server.maxConnections = resolved.maxConnections;
  server.listen(resolved.port, resolved.host);
  await Promise.race([once(server, 'listening'), once(server, 'error').then(([err]) => Promise.reject(err))]);
  const port = (server.address() as AddressInfo).port;
  const host = resolved.host.includes(':') ? `[${resolved.host}]` : resolved.host;

  const cutAll = (): void => {
    for (const f of inFlight) f.controller.abort(new DOMException('emulator destroyed', 'AbortError'));
    server.closeAllConnections();
  };

  return {
    url: `http://${host}:${port}`,
    port,
    async close() {
      const stopped = stopServer(server);
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, resolved.closeTimeoutMs);
        timer.unref();
      });
      await Promise.race([Promise.all([...inFlight].map((f) => f.done)), timeout]);
      clearTimeout(timer);
      cutAll();
      await stopped;
    },
    async destroy() {
      const stopped = stopServer(server);
      cutAll();
      await stopped;
    },
    stats: () => statsOf(core),
    on(event, listener) {
      core.events.on(event, listener);
      return () => core.events.off(event, listener);
    },
    cacheEntries: () => core.store.entries(core.clock.now()),
    clearCache: () => core.store.clear(),
    rateLimits: {
      get table() {
        return core.rateLimits.table;
      },
      setSpendLimit: (usd) => core.rateLimits.setSpendLimit(usd),
      spent: (apiKey) => core.rateLimits.spent(apiKey),
    },
  };
}
