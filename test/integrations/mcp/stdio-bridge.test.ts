import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../../src/integrations/emulator/start.ts';
import { startMcpProxy, type McpProxy } from '../../../src/integrations/mcp/start.ts';
import { cliArgs, forkcache } from '../../cli/run-cli.ts';

const ROOT = resolve(import.meta.dirname, '../../..');
const open: { emu?: Emulator; mcp?: McpProxy } = {};
afterAll(async () => {
  await open.mcp?.close(0);
  await open.emu?.destroy();
});

describe('forkcache mcp --config: the fork tool over stdio, run by the proxy', () => {
  it('lists both tools and runs a fork call the proxy captured, with the id Claude Code passes', async () => {
    open.emu = await startEmulator({ latency: 'off', script: 'claude-code', minCacheableTokens: 10 });
    const workspace = mkdtempSync(join(tmpdir(), 'forkcache-mcp-stdio-'));
    open.mcp = await startMcpProxy({ upstream: open.emu.url, workspace });
    const config = join(workspace, 'mcp.json');
    writeFileSync(config, JSON.stringify({ mcpServers: open.mcp.mcpServers() }));

    const sdk = new Anthropic({ apiKey: 'sk-ant-test-stdio-0123456789', baseURL: open.mcp.proxy.url, maxRetries: 0 });
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

    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [...cliArgs(), 'mcp', '--config', config],
        cwd: ROOT,
        stderr: 'pipe',
      }),
    );
    expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(['fork', 'fork_status']);
    // the proxy's progress comes through the bridge to a client that asks for it
    const progress: (string | undefined)[] = [];
    const result = await client.callTool(
      { name: 'fork', arguments: call.input as Record<string, unknown>, _meta: { 'claudecode/toolUseId': call.id } },
      undefined,
      { onprogress: (p) => progress.push(p.message) },
    );
    await client.close();
    const text = (result.content as { text: string }[])[0]!.text;
    expect(result.isError, text).toBe(false);
    expect(progress.length).toBeGreaterThan(0);
    for (const m of progress)
      expect(m).toMatch(/^\d of 2 fork\(s\) ended; fork \d (started|called \S+|finished turn \d+|ended: \S+)/);
    expect(text).toMatch(/^## fork 1 \(completed\): read a\.txt$/m);
    expect(text).toMatch(/^## fork 2 \(completed\): read b\.txt$/m);
  });

  it('refuses a config without a bearer secret, and --mcp-config without --mcp (exit 2)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'forkcache-mcp-bad-'));
    const bad = join(dir, 'mcp.json');
    writeFileSync(bad, JSON.stringify({ mcpServers: { forkcache: { url: 'http://127.0.0.1:1/mcp', headers: {} } } }));
    const refused = await forkcache(['mcp', '--config', bad]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/--config .*mcp\.json.*Authorization/);
    const stray = await forkcache(['proxy', '--mcp-config', join(dir, 'x.json')]);
    expect(stray.code).toBe(2);
    expect(stray.stderr).toContain('--mcp-config: needs --mcp');
    const bash = await forkcache(['proxy', '--mcp-allow-bash']);
    expect(bash.code).toBe(2);
    expect(bash.stderr).toContain('--mcp-allow-bash: needs --mcp');
  });
});
