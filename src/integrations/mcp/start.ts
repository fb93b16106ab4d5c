import { randomBytes } from 'node:crypto';
import { ForkCallRegistry } from '../proxy/fork-calls.ts';
import type { ProxyOptions } from '../proxy/options.ts';
import { startProxy, type Proxy } from '../proxy/server.ts';
import type { ForkRunSettings } from './fork-run.ts';
import { ForkService } from './fork-service.ts';
import { MCP_PATH, mcpRoute } from './http.ts';

export interface McpProxyOptions extends Omit<ProxyOptions, 'forkCalls' | 'route'> {
  /** Where the children work (default the current directory). */
  workspace?: string;
  /** The children's runs directory (transcripts, summaries). */
  runsDir?: string;
  /** The bearer secret of the MCP endpoint (default 32 random bytes, hex). */
  secret?: string;
  /** How long a tool call waits for its request to have gone through (default 30 s). */
  claimWaitMs?: number;
  maxThreads?: number;
  concurrency?: number;
  /** Children may run the client's shell tool, in bubblewrap only (`ForkRunSettings.allowBash`; default false). */
  allowBash?: boolean;
}

export interface McpProxy {
  readonly proxy: Proxy;
  /** The Streamable HTTP endpoint: `<proxy>/mcp`. */
  readonly mcpUrl: string;
  readonly secret: string;
  /** An MCP client configuration (Claude Code's `--mcp-config`, the Agent SDK's `mcpServers`). */
  mcpServers(name?: string): Record<string, { type: 'http'; url: string; headers: Record<string, string> }>;
  /** Cancel the fan-outs still running, then close the proxy. */
  close(timeoutMs?: number): Promise<void>;
}

/**
 * `forkcache proxy --mcp`: one process is both the proxy the client's API requests go through
 * and the MCP server whose `fork` tool the client calls. Sharing the process is what lets the
 * tool fork from the exact request in which the model called it: the proxy keeps that request's
 * bytes and the answer's turn, the tool claims them, and the children go back through the proxy,
 * so its ledger and report hold the client's turns and the whole tree.
 */
export async function startMcpProxy(options: McpProxyOptions = {}): Promise<McpProxy> {
  const {
    workspace,
    runsDir,
    secret: given,
    claimWaitMs,
    maxThreads,
    concurrency,
    allowBash,
    ...proxyOptions
  } = options;
  const secret = given ?? randomBytes(32).toString('hex');
  const calls = new ForkCallRegistry();
  const settings: ForkRunSettings = {
    proxyUrl: '',
    workspace: workspace ?? process.cwd(),
    runsDir,
    maxThreads,
    concurrency,
    allowBash: allowBash === true,
  };
  const service = new ForkService(calls, settings, claimWaitMs);
  const proxy = await startProxy({ ...proxyOptions, forkCalls: calls, route: mcpRoute(service, secret) });
  settings.proxyUrl = proxy.url;
  const mcpUrl = `${proxy.url}${MCP_PATH}`;
  return {
    proxy,
    mcpUrl,
    secret,
    mcpServers: (name = 'forkcache') => ({
      [name]: { type: 'http', url: mcpUrl, headers: { Authorization: `Bearer ${secret}` } },
    }),
    async close(timeoutMs) {
      await service.close();
      await proxy.close(timeoutMs);
    },
  };
}
