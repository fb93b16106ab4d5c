import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createForkMcpServer, type ForkTools } from './server.ts';

/** Where the MCP endpoint sits on the proxy's port, beside the proxied `/v1/...`. */
export const MCP_PATH = '/mcp';

const digest = (value: string): Buffer => createHash('sha256').update(value).digest();

/** `Authorization: Bearer <secret>`, compared in constant time (digests of equal length). */
function bearerMatches(header: string | undefined, secret: string): boolean {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return match !== null && timingSafeEqual(digest(match[1]!), digest(secret));
}

function refuse(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json', 'www-authenticate': 'Bearer' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message }, id: null }));
}

/**
 * The proxy's route for `/mcp`: Streamable HTTP, stateless (a server and transport per request,
 * nothing to expire), behind the secret. Anyone who can reach the port could otherwise start
 * fan-outs billed to the key of the client whose call they name; with it, only a client given
 * the secret (in its MCP config) can. Every other path is left to the proxy.
 */
export function mcpRoute(tools: ForkTools, secret: string): (req: IncomingMessage, res: ServerResponse) => boolean {
  return (req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== MCP_PATH) return false;
    if (!bearerMatches(req.headers.authorization, secret)) {
      req.resume();
      refuse(res, 401, 'forkcache mcp: missing or wrong bearer secret');
      return true;
    }
    const server = createForkMcpServer(tools);
    const transport = new StreamableHTTPServerTransport({});
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    void server
      .connect(transport)
      .then(() => transport.handleRequest(req, res))
      .catch(() => {
        if (!res.headersSent) refuse(res, 500, 'forkcache mcp: the request could not be served');
        else res.destroy();
      });
    return true;
  };
}
