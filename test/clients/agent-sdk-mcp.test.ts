// The real client runs as a child process (node:child_process, started by the test or its SDK): the integration project.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/integrations/emulator/start.ts';
import { startMcpProxy, type McpProxy } from '../../src/integrations/mcp/start.ts';
import { claudeCodeBuilds, clientHome, expectOneFanOut } from './helpers.ts';

for (const { agentSdk } of claudeCodeBuilds) if (!agentSdk.ok) console.warn(`test/clients: ${agentSdk.why}`);

const FORKS = 10;
/** What each build's test opened, closed at the end (both builds' servers, not only the last). */
const opened: { emu: Emulator; mcp?: McpProxy }[] = [];
afterAll(async () => {
  for (const { emu, mcp } of opened) {
    await mcp?.close(0);
    await emu.destroy();
  }
});

interface SdkMessage {
  type: string;
  subtype?: string;
  is_error?: boolean;
  result?: string;
}
type Query = (input: { prompt: string; options: Record<string, unknown> }) => AsyncIterable<SdkMessage>;

describe.each(claudeCodeBuilds)(
  'the Claude Agent SDK $agentSdkVersion through forkcache proxy --mcp',
  ({ agentSdkVersion, agentSdkDir, agentSdk }) => {
    describe.skipIf(!agentSdk.ok)(agentSdk.why, () => {
      it(`query() with mcpServers fans out ${FORKS} forks that read the prefix its session cached`, async () => {
        const { project, env } = clientHome();
        const open: (typeof opened)[number] = { emu: await startEmulator({ latency: 'off', script: 'claude-code' }) };
        opened.push(open);
        const mcp = await startMcpProxy({ upstream: open.emu.url, workspace: project });
        open.mcp = mcp;
        const { query } = (await import(pathToFileURL(join(agentSdkDir, 'sdk.mjs')).href)) as { query: Query };
        let result: SdkMessage | undefined;
        for await (const message of query({
          prompt: `fork ${FORKS} times: count the lines of notes.txt`,
          options: {
            cwd: project,
            maxTurns: 6,
            mcpServers: mcp.mcpServers(),
            allowedTools: ['mcp__forkcache__fork', 'ToolSearch'],
            env: { ...env, ANTHROPIC_BASE_URL: mcp.proxy.url },
          },
        })) {
          if (message.type === 'result') result = message;
        }
        expect(result?.is_error, JSON.stringify(result)).toBe(false);
        expect(result?.result).toContain(`${FORKS} completed fork report(s) came back from mcp__forkcache__fork`);

        expectOneFanOut(mcp.proxy, FORKS, `agent-sdk-mcp (${agentSdkVersion})`);
      });
    });
  },
);
