import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { VERSION } from '../../core/util/version.ts';
import { forkInputShape, MAX_DIRECTIVES, statusInputShape } from './fork-input.ts';
import type { ToolAnswer } from './fork-service.ts';

/** What the tools call: the fork service in the proxy's process, or a bridge to it (stdio). */
export interface ForkTools {
  /** `onProgress` when the client asked for progress (a progress token): a line saying how far the children are. */
  fork(
    args: unknown,
    toolUseId: string | undefined,
    signal: AbortSignal,
    onProgress?: (message: string) => void,
  ): Promise<ToolAnswer>;
  status(args: unknown, signal: AbortSignal): ToolAnswer | Promise<ToolAnswer>;
}

const FORK_DESCRIPTION =
  'Fork this conversation into parallel children, one per directive. Each child starts from exactly ' +
  'what you see now (the same system prompt, tools and messages, read from the prompt cache), does its ' +
  'directive with the same tools, and reports back; the reports are the result of this call. ' +
  `Up to ${MAX_DIRECTIVES} directives. Write each directive so it stands on its own.`;

/** Claude Code names the call it is making: the id lets the proxy tell two identical calls apart. */
const TOOL_USE_META = 'claudecode/toolUseId';

const answer = ({ text, isError }: ToolAnswer) => ({ content: [{ type: 'text' as const, text }], isError });

/** An MCP server with forkcache's two tools; one per HTTP request (stateless) or one for stdio. */
export function createForkMcpServer(tools: ForkTools): McpServer {
  const server = new McpServer({ name: 'forkcache', version: VERSION });
  server.registerTool(
    'fork',
    { title: 'Fork into parallel children', description: FORK_DESCRIPTION, inputSchema: forkInputShape },
    async (args, extra) => {
      const id = extra._meta?.[TOOL_USE_META];
      const token = extra._meta?.progressToken;
      // MCP progress must increase with each notification: a count of them, the figures in words
      let sent = 0;
      const onProgress =
        token === undefined
          ? undefined
          : (message: string) =>
              void extra
                .sendNotification({
                  method: 'notifications/progress',
                  params: { progressToken: token, progress: ++sent, message },
                })
                .catch(() => undefined);
      return answer(await tools.fork(args, typeof id === 'string' ? id : undefined, extra.signal, onProgress));
    },
  );
  server.registerTool(
    'fork_status',
    {
      title: 'Reports of a background fork run',
      description: 'The state of a fork call made with background: true, and its reports once every child is done.',
      inputSchema: statusInputShape,
    },
    async (args, extra) => answer(await tools.status(args, extra.signal)),
  );
  return server;
}
