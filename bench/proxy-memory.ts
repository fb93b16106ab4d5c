import { once } from 'node:events';
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startProxy } from '../src/integrations/proxy/server.ts';
import type { SuiteOptions, SuiteResult } from './types.ts';

const START =
  'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_m","type":"message","role":"assistant","model":"claude-opus-5-5","content":[],"usage":{"input_tokens":5,"cache_creation_input_tokens":0,"cache_read_input_tokens":4000,"output_tokens":1}}}\n\n';
const DELTA = `event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"${'word '.repeat(40)}"}}\n\n`;

const mib = (bytes: number): number => Math.round((bytes / 2 ** 20) * 10) / 10;

/** Open `n` streams at once (each has begun and streamed 100 deltas), measure, then end them. */
async function openStreams(
  baseUrl: string,
  n: number,
  open: ServerResponse[],
): Promise<{ rssMib: number; heapMib: number }> {
  const url = new URL(baseUrl);
  const responses: IncomingMessage[] = [];
  await Promise.all(
    Array.from({ length: n }, async () => {
      const req = request({
        host: url.hostname,
        port: url.port,
        path: '/v1/messages',
        method: 'POST',
        headers: { 'content-type': 'application/json' },
      });
      req.end(
        JSON.stringify({
          model: 'claude-opus-5-5',
          max_tokens: 8,
          stream: true,
          messages: [{ role: 'user', content: 'hold' }],
        }),
      );
      const [res] = (await once(req, 'response')) as [IncomingMessage];
      res.resume();
      responses.push(res);
    }),
  );
  while (open.length < n) await new Promise((resolve) => setImmediate(resolve));
  global.gc?.();
  const { rss, heapUsed } = process.memoryUsage();
  for (const res of open.splice(0)) res.end('event: message_stop\ndata: {"type":"message_stop"}\n\n');
  await Promise.all(responses.filter((r) => !r.complete).map((r) => once(r, 'end')));
  return { rssMib: mib(rss), heapMib: mib(heapUsed) };
}

/**
 * Suite 8, memory with many concurrent streams: N streams held open at once (each begun, 100
 * deltas sent) directly from a stub upstream and through the proxy, in one process; what the
 * proxy adds per open stream. Responses are piped, never buffered, so it should not grow with
 * what a stream has sent.
 */
export async function proxyMemorySuite(options: SuiteOptions): Promise<SuiteResult> {
  const sizes = options.quick ? [100, 400] : [100, 400, 1000];
  const open: ServerResponse[] = [];
  const upstream = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(START);
      for (let i = 0; i < 100; i++) res.write(DELTA);
      open.push(res);
    });
  });
  upstream.listen(0, '127.0.0.1');
  await once(upstream, 'listening');
  const upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  const proxy = await startProxy({ upstream: upstreamUrl });
  const rows: Record<string, unknown>[] = [];
  try {
    await openStreams(proxy.url, 50, open); // warm-up: JIT, agent sockets
    for (const n of sizes) {
      const base = await openStreams(upstreamUrl, n, open);
      const via = await openStreams(proxy.url, n, open);
      rows.push({
        streams: n,
        direct_rss_mib: base.rssMib,
        proxied_rss_mib: via.rssMib,
        direct_heap_mib: base.heapMib,
        proxied_heap_mib: via.heapMib,
        proxy_kib_per_stream: Math.round(((via.rssMib - base.rssMib) * 1024) / n),
      });
    }
  } finally {
    await proxy.close();
    upstream.closeAllConnections();
    upstream.close();
  }
  const last = rows[rows.length - 1]!;
  return {
    name: 'proxy-memory',
    title: 'forkcache proxy: memory with many streams open at once (each begun, ~20 KB streamed)',
    rows,
    conclusion: `With ${String(last['streams'])} streams open at once the process held ${String(last['proxied_rss_mib'])} MiB through the proxy against ${String(last['direct_rss_mib'])} MiB direct (${String(last['proxy_kib_per_stream'])} KiB per stream for the proxy's two sockets and its exchange state); nothing a stream has sent stays in memory.`,
  };
}
