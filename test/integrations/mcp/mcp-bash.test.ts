import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../../src/integrations/emulator/start.ts';
import { startMcpProxy, type McpProxy } from '../../../src/integrations/mcp/start.ts';
import { probeBubblewrap } from '../../../src/core/tools/sandbox/bwrap-probe.ts';
import { restoreEnv } from '../../helpers.ts';

// `forkcache proxy --mcp --mcp-allow-bash` (`allowBash`): Claude Code's children may run Bash,
// always in bubblewrap. Played as an attacker would from a child: reach a server listening on
// the proxy's loopback, read the proxy's key from its environment. Without the option, Bash is
// refused as before.

const MODEL = 'claude-sonnet-4-6';
const KEY = 'sk-ant-test-mcp-bash-0123456789abcdef';
const ENV_KEY = 'sk-ant-proxy-env-key-9876543210fedcba';
const cc = { type: 'ephemeral' } as const;
const open: { emu?: Emulator; mcp?: McpProxy; listener?: Server } = {};
const saved = { ...process.env };

beforeEach(() => {
  // the proxy's own key, in its environment: no child's command may read it
  process.env['ANTHROPIC_API_KEY'] = ENV_KEY;
});
afterEach(async () => {
  await open.mcp?.close(0);
  await open.emu?.destroy();
  await new Promise((resolve) => (open.listener ? open.listener.close(resolve) : resolve(undefined)));
  delete open.mcp;
  delete open.emu;
  delete open.listener;
  restoreEnv(saved);
});

/** Claude Code's shape of a turn, its tools Read, Bash and the MCP fork tool. */
function parentRequest(instruction: string): Anthropic.MessageCreateParamsStreaming {
  const history = Array.from({ length: 400 }, (_, i) => `note${i}`).join(' ');
  const tool = (name: string, property: string) => ({
    name,
    description: name,
    input_schema: { type: 'object' as const, properties: { [property]: { type: 'string' } } },
  });
  return {
    model: MODEL,
    max_tokens: 1024,
    stream: true,
    system: [{ type: 'text', text: `You are an agent. ${history}`, cache_control: cc }],
    tools: [
      tool('Read', 'file_path'),
      tool('Bash', 'command'),
      {
        name: 'mcp__forkcache__fork',
        description: 'Fork',
        input_schema: { type: 'object', properties: { directives: { type: 'array', items: { type: 'string' } } } },
      },
    ],
    messages: [{ role: 'user', content: [{ type: 'text', text: instruction, cache_control: cc }] }],
  };
}

/** A server on the proxy's loopback: how many connections reached it. */
async function listening(): Promise<{ port: number; hits: () => number }> {
  let hits = 0;
  const server = createServer((_req, res) => {
    hits += 1;
    res.end('reached the host\n');
  });
  open.listener = server;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, hits: () => hits };
}

/** The parent's turn through the proxy, then the MCP call of the fork tool it made; the tool's text. */
async function forkThroughMcp(
  allowBash: boolean,
  directives: string[],
  extra: Record<string, unknown> = {},
): Promise<{ text: string; isError: boolean }> {
  open.emu = await startEmulator({ latency: 'off', script: 'claude-code', minCacheableTokens: 10 });
  const workspace = mkdtempSync(join(tmpdir(), 'forkcache-mcp-bash-'));
  open.mcp = await startMcpProxy({ upstream: open.emu.url, workspace, maxThreads: 2, allowBash });
  const sdk = new Anthropic({ apiKey: KEY, baseURL: open.mcp.proxy.url, maxRetries: 0 });
  const answer = await sdk.messages.stream(parentRequest(`fork ${directives.join(' | ')}`)).finalMessage();
  const call = answer.content.find((b) => b.type === 'tool_use');
  expect(call?.name).toBe('mcp__forkcache__fork');
  const client = new Client({ name: 'test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(open.mcp.mcpUrl), {
      requestInit: { headers: { Authorization: `Bearer ${open.mcp.secret}` } },
    }),
  );
  const result = await client.callTool({
    name: 'fork',
    arguments: { ...(call!.input as object), ...extra },
    _meta: { 'claudecode/toolUseId': call!.id },
  });
  await client.close();
  return { text: (result.content as { text: string }[])[0]!.text, isError: result.isError === true };
}

const run = (command: string): string => `run \`${command}\` and report`;

describe('forkcache proxy --mcp: Bash for the children, under the option, in the sandbox', () => {
  it('with allowBash a child runs Bash in bubblewrap: no loopback, no key from the environment', async (ctx) => {
    const bwrap = probeBubblewrap();
    if (!('file' in bwrap)) return ctx.skip(`needs bubblewrap: ${bwrap.missing}`);
    const host = await listening();
    // reachable from this process: a child's "unreachable" is its sandbox, not a server that is down
    expect(await (await fetch(`http://127.0.0.1:${host.port}/`)).text()).toBe('reached the host\n');
    const { text, isError } = await forkThroughMcp(true, [
      run('echo hello-from-bash'),
      run(`if curl -s -m 5 http://127.0.0.1:${host.port}/ ; then echo reached; else echo unreachable; fi`),
      run('echo key=${ANTHROPIC_API_KEY:-none}'),
    ]);
    expect(isError, text).toBe(false);
    expect(text).toMatch(/^forkcache: 3 fork\(s\), 3 completed; tool set claude-code; /);
    expect(text).toContain('the command printed "hello-from-bash"');
    // its own network namespace: the proxy's loopback is not the child's
    expect(text).toContain('the command printed "unreachable"');
    expect(host.hits()).toBe(1);
    // a minimal environment: the proxy's key is not in it
    expect(text).toContain('the command printed "key=none"');
    expect(text).not.toContain(ENV_KEY);
  });

  it('without it Bash is refused as before, and a call cannot ask for it', async () => {
    const host = await listening();
    const refused = await forkThroughMcp(false, [
      run(`curl -s -m 5 http://127.0.0.1:${host.port}/`),
      run('echo key=${ANTHROPIC_API_KEY:-none}'),
    ]);
    expect(refused.isError, refused.text).toBe(false);
    expect(refused.text).toMatch(/^forkcache: 2 fork\(s\), 0 completed; /);
    expect(refused.text.match(/Bash failed: .*not allowed/g)).toHaveLength(2);
    expect(host.hits()).toBe(0);
    expect(refused.text).not.toContain(ENV_KEY);
  });

  it('a call asking for bash on a server that does not allow it is refused, naming the option', async () => {
    const asked = await forkThroughMcp(false, [run('echo hi')], { bash: true });
    expect(asked.isError).toBe(true);
    expect(asked.text).toContain('--mcp-allow-bash');
  });
});
