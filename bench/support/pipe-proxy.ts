// The floor of the proxy bench: the smallest reverse proxy Node can be (read the body, forward
// it on a keep-alive agent, pipe the answer back), no ledger, no analysis. Run as its own
// process, like `forkcache proxy`: `node --import tsx bench/support/pipe-proxy.ts UPSTREAM_URL`.
import { Agent, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';

const upstream = new URL(process.argv[2]!);
const agent = new Agent({ keepAlive: true });
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    const headers = { ...req.headers, host: upstream.host, 'content-length': String(body.length) };
    delete headers.connection;
    const up = request(
      { host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers, agent },
      (answer) => {
        const out = { ...answer.headers };
        delete out.connection;
        delete out['transfer-encoding'];
        res.writeHead(answer.statusCode ?? 502, out);
        answer.pipe(res);
      },
    );
    up.on('error', () => res.destroy());
    up.end(body);
  });
});
server.listen(0, '127.0.0.1', () =>
  process.stdout.write(`pipe proxy listening on http://127.0.0.1:${(server.address() as AddressInfo).port}\n`),
);
process.on('SIGTERM', () => server.close(() => process.exit(0)));
