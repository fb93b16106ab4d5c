import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterEach, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../../src/integrations/emulator/start.ts';
import { startMcpProxy, type McpProxy } from '../../../src/integrations/mcp/start.ts';
import { cliArgs } from '../../cli/run-cli.ts';

// Issue 44: MCP v2 ships its client as `@modelcontextprotocol/client` 2.4 beside
// `@modelcontextprotocol/sdk` 1.32 (test/integrations/mcp/mcp-proxy.test.ts and stdio-bridge.test.ts drive
// forkcache with the 1.32 client). The same calls from a v2 client: `proxy --mcp`'s Streamable
// HTTP route, and `forkcache mcp` over stdio.

const ROOT = resolve(import.meta.dirname, '../../..');
const open: { emu?: Emulator; mcp?: McpProxy } = {};

afterEach(async () => {
  await open.mcp?.close(0);
  await open.emu?.destroy();
  delete open.mcp;
  delete open.emu;
});

/** The proxy with the emulator behind it, and the model's `fork` call as Claude Code would pass it on. */
async function forkCall(): Promise<{ mcp: McpProxy; workspace: string; call: Anthropic.ToolUseBlock }> {
  open.emu = await startEmulator({ latency: 'off', script: 'claude-code', minCacheableTokens: 10 });
  const workspace = mkdtempSync(join(tmpdir(), 'forkcache-mcp-v2-'));
  open.mcp = await startMcpProxy({ upstream: open.emu.url, workspace, maxThreads: 2 });
  const sdk = new Anthropic({ apiKey: 'sk-ant-test-mcp-v2-0123456789', baseURL: open.mcp.proxy.url, maxRetries: 0 });
  const answer = await sdk.messages
    .stream({
      model: 'claude-sonnet-4-6',
      max_tokens: 512,
      system: [{ type: 'text', text: 'You are an agent.', cache_control: { type: 'ephemeral' } }],
      tools: [{ name: 'mcp__forkcache__fork', description: 'Fork', input_schema: { type: 'object' } }],
      messages: [{ role: 'user', content: 'fork read a.txt | read b.txt' }],
    })
    .finalMessage();
  const call = answer.content.find((b) => b.type === 'tool_use')!;
  return { mcp: open.mcp, workspace, call };
}

/** List the tools, call `fork` with progress, and return the text of its answer. */
async function fork(client: Client, call: Anthropic.ToolUseBlock): Promise<{ text: string; progress: string[] }> {
  expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(['fork', 'fork_status']);
  const progress: string[] = [];
  const result = await client.callTool(
    { name: 'fork', arguments: call.input as Record<string, unknown>, _meta: { 'claudecode/toolUseId': call.id } },
    { onprogress: (p) => progress.push(p.message ?? '') },
  );
  await client.close();
  const text = (result.content as { type: string; text: string }[])[0]!.text;
  expect(result.isError, text).toBe(false);
  return { text, progress };
}

describe('an MCP v2 client (@modelcontextprotocol/client 2.4)', () => {
  it('runs a fork call on proxy --mcp (Streamable HTTP), with progress', async () => {
    const { mcp, call } = await forkCall();
    const client = new Client({ name: 'test-v2', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(mcp.mcpUrl), {
        requestInit: { headers: { Authorization: `Bearer ${mcp.secret}` } },
      }),
    );
    const { text, progress } = await fork(client, call);
    expect(progress.length).toBeGreaterThan(0);
    expect(progress.every((m) => /^\d of 2 fork\(s\) ended(;|$)/.test(m))).toBe(true);
    expect(text).toMatch(/^## fork 1 \(completed\): read a\.txt$/m);
    expect(text).toMatch(/^## fork 2 \(completed\): read b\.txt$/m);
  });

  it('runs a fork call through forkcache mcp (stdio), bridged to the proxy', async () => {
    const { mcp, workspace, call } = await forkCall();
    const config = join(workspace, 'mcp.json');
    writeFileSync(config, JSON.stringify({ mcpServers: mcp.mcpServers() }));
    const client = new Client({ name: 'test-v2', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [...cliArgs(), 'mcp', '--config', config],
        cwd: ROOT,
        stderr: 'pipe',
      }),
    );
    const { text, progress } = await fork(client, call);
    expect(progress.length).toBeGreaterThan(0);
    expect(text).toMatch(/^## fork 1 \(completed\): read a\.txt$/m);
    expect(text).toMatch(/^## fork 2 \(completed\): read b\.txt$/m);
  });
});
