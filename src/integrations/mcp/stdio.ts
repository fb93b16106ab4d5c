import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { VERSION } from '../../core/util/version.ts';
import { createForkMcpServer, type ForkTools } from './server.ts';
import type { ToolAnswer } from './fork-service.ts';

/** A fan-out of hundreds of forks takes minutes: the bridge never gives up on one first. */
const CALL_TIMEOUT_MS = 24 * 60 * 60 * 1000;

function toAnswer(result: Awaited<ReturnType<Client['callTool']>>): ToolAnswer {
  const content = (result.content ?? []) as { type: string; text?: string }[];
  return { text: content.map((c) => c.text ?? '').join('\n'), isError: result.isError === true };
}

/**
 * `forkcache mcp --proxy URL`: the same two tools over stdio, for clients that start their MCP
 * servers as processes. The fork runs in the proxy (only it has seen the request to fork
 * from): each call goes to the proxy's endpoint with the secret, the tool_use id passed on.
 */
export async function serveStdioBridge(mcpUrl: string, secret: string): Promise<void> {
  const client = new Client({ name: 'forkcache-mcp-stdio', version: VERSION });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(mcpUrl), {
      requestInit: { headers: { Authorization: `Bearer ${secret}` } },
    }),
  );
  const call = async (
    name: string,
    args: unknown,
    meta: Record<string, unknown> | undefined,
    signal: AbortSignal,
    onProgress?: (message: string) => void,
  ) =>
    toAnswer(
      await client.callTool(
        { name, arguments: args as Record<string, unknown>, ...(meta ? { _meta: meta } : {}) },
        undefined,
        {
          signal,
          timeout: CALL_TIMEOUT_MS,
          // the proxy's progress, passed on to the client that asked for it
          ...(onProgress ? { onprogress: (p: { message?: string | undefined }) => onProgress(p.message ?? '') } : {}),
        },
      ),
    );
  const tools: ForkTools = {
    fork: (args, toolUseId, signal, onProgress) =>
      call(
        'fork',
        args,
        toolUseId === undefined ? undefined : { 'claudecode/toolUseId': toolUseId },
        signal,
        onProgress,
      ),
    status: (args, signal) => call('fork_status', args, undefined, signal),
  };
  const server = createForkMcpServer(tools);
  // The client closing stdin ends the server (the SDK sets the transport's own onclose).
  const closed = new Promise<void>((resolve) => (server.server.onclose = resolve));
  await server.connect(new StdioServerTransport());
  await closed;
  await client.close();
}
