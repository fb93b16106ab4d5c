import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ProxyCore, type ProxyEvents } from './core.ts';
import { handleExchange } from './exchange/exchange.ts';
import type { ProxyLedger } from './report/ledger.ts';
import { resolveProxyOptions, type ProxyOptions } from './options.ts';
import { proxySummary, type ProxySummary } from './report/summary.ts';

/** A running proxy. */
export interface Proxy {
  /** Base URL for clients: `ANTHROPIC_BASE_URL=<url>`. */
  readonly url: string;
  readonly port: number;
  readonly ledger: ProxyLedger;
  /** Requests on their way (held, sent, or streaming back). */
  readonly inFlight: number;
  /** Requests parked at the warm-first gate now. */
  readonly held: number;
  summary(): ProxySummary;
  on<K extends keyof ProxyEvents>(event: K, listener: (...args: ProxyEvents[K]) => void): () => void;
  /** Stop accepting; let exchanges in flight finish (up to `timeoutMs`, default 10 s), then stop. */
  close(timeoutMs?: number): Promise<void>;
  /** Stop now: exchanges in flight are cut. */
  destroy(): Promise<void>;
}

/**
 * Start an Anthropic-compatible reverse proxy: clients point `ANTHROPIC_BASE_URL` at it, it
 * forwards every request to `upstream` and streams the answer back unchanged, and keeps a
 * ledger of what went through (usage, cost, time to first byte, why each request read what it
 * read, sessions and fan-outs).
 *
 * @example
 * const proxy = await startProxy({ upstream: emulator.url, warmFirst: true });
 * const client = new Anthropic({ baseURL: proxy.url, apiKey });
 * ... ; console.log(proxy.summary().fanouts); await proxy.close();
 */
export async function startProxy(options: ProxyOptions = {}): Promise<Proxy> {
  const core = new ProxyCore(resolveProxyOptions(options));
  const exchanges = new Set<Promise<void>>();
  const { headersTimeoutMs, requestTimeoutMs, timeoutCheckMs } = core.options;
  // Bounded clients (a slowloris held 4,000 idle connections): headers and the whole request
  // must arrive in time, and there is a cap on open connections (past it Node closes new ones
  // at once). The request timeout ends when the request has arrived: a request held at the
  // warm-first gate or streaming its answer for minutes is not cut.
  const server = createServer(
    { headersTimeout: headersTimeoutMs, requestTimeout: requestTimeoutMs, connectionsCheckingInterval: timeoutCheckMs },
    (req, res) => {
      if (core.options.route?.(req, res)) return;
      const done = handleExchange(core, req, res).catch(() => {
        if (!res.headersSent) res.destroy();
      });
      exchanges.add(done);
      void done.finally(() => exchanges.delete(done));
    },
  );
  server.maxConnections = core.options.maxConnections;
  server.listen(core.options.port, core.options.host);
  await Promise.race([once(server, 'listening'), once(server, 'error').then(([err]) => Promise.reject(err))]);
  const port = (server.address() as AddressInfo).port;
  const host = core.options.host.includes(':') ? `[${core.options.host}]` : core.options.host;

  const stop = async (drainMs: number): Promise<void> => {
    const closed = server.listening ? once(server, 'close') : Promise.resolve();
    server.close();
    server.closeIdleConnections();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, drainMs);
      timer.unref();
    });
    await Promise.race([Promise.all(exchanges), timeout]);
    clearTimeout(timer);
    server.closeAllConnections();
    await Promise.all(exchanges);
    core.catchUp();
    await closed;
    core.agent.destroy();
    core.log?.close();
  };

  return {
    url: `http://${host}:${port}`,
    port,
    get ledger() {
      core.catchUp();
      return core.ledger;
    },
    get inFlight() {
      return core.inFlight;
    },
    get held() {
      return core.gate?.waiting ?? 0;
    },
    summary: () => {
      core.catchUp();
      return proxySummary(core);
    },
    on(event, listener) {
      core.events.on(event, listener as never);
      return () => core.events.off(event, listener as never);
    },
    close: (timeoutMs = 10_000) => stop(timeoutMs),
    destroy: () => stop(0),
  };
}
