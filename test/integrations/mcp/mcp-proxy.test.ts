import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../../src/integrations/emulator/start.ts';
import { startMcpProxy, type McpProxy } from '../../../src/integrations/mcp/start.ts';

const MODEL = 'claude-sonnet-4-6';
const KEY = 'sk-ant-test-mcp-0123456789abcdef';
const cc = { type: 'ephemeral' } as const;
const open: { emu?: Emulator; mcp?: McpProxy; recorder?: Server } = {};

afterEach(async () => {
  await open.mcp?.close(0);
  await open.emu?.destroy();
  await new Promise((resolve) => (open.recorder ? open.recorder.close(resolve) : resolve(undefined)));
  delete open.mcp;
  delete open.emu;
  delete open.recorder;
});

/** What the API was sent: each request's key and body, in front of the emulator. */
interface Seen {
  path: string;
  key: string;
  body: string;
  /** The request's `anthropic-beta` header, if it had one. */
  beta?: string | undefined;
}

/** An upstream in front of the emulator that records every request's key and body, then forwards it. */
async function recordingUpstream(target: string, seen: Seen[]): Promise<string> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const key = req.headers['x-api-key'] ?? /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
      const beta = req.headers['anthropic-beta'];
      seen.push({ path: req.url ?? '', key: String(key), body: body.toString('utf8'), beta: beta?.toString() });
      const { host: _host, ...headers } = req.headers;
      const up = httpRequest(`${target}${req.url}`, { method: req.method, headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      up.end(body);
    });
  });
  open.recorder = server;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Claude Code's shape of a turn: system and tools, a long history, the marker on the last user block. */
function parentRequest(instruction: string): Anthropic.MessageCreateParamsStreaming {
  const history = Array.from({ length: 400 }, (_, i) => `note${i}`).join(' ');
  return {
    model: MODEL,
    max_tokens: 1024,
    stream: true,
    system: [{ type: 'text', text: `You are an agent. ${history}`, cache_control: cc }],
    tools: [
      {
        name: 'Read',
        description: 'Read a file',
        input_schema: { type: 'object', properties: { file_path: { type: 'string' } } },
      },
      {
        name: 'mcp__forkcache__fork',
        description: 'Fork',
        input_schema: { type: 'object', properties: { directives: { type: 'array', items: { type: 'string' } } } },
      },
    ],
    messages: [{ role: 'user', content: [{ type: 'text', text: instruction, cache_control: cc }] }],
  };
}

async function mcpClient(mcp: McpProxy, secret = mcp.secret): Promise<Client> {
  const client = new Client({ name: 'test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(mcp.mcpUrl), {
      requestInit: { headers: { Authorization: `Bearer ${secret}` } },
    }),
  );
  return client;
}

async function setup(): Promise<{ mcp: McpProxy; sdk: Anthropic; workspace: string }> {
  open.emu = await startEmulator({ latency: 'off', script: 'claude-code', minCacheableTokens: 10 });
  const workspace = mkdtempSync(join(tmpdir(), 'forkcache-mcp-'));
  writeFileSync(join(workspace, 'notes.txt'), 'line one\nline two\n');
  open.mcp = await startMcpProxy({ upstream: open.emu.url, workspace, maxThreads: 2 });
  return { mcp: open.mcp, sdk: new Anthropic({ apiKey: KEY, baseURL: open.mcp.proxy.url, maxRetries: 0 }), workspace };
}

describe('forkcache proxy --mcp: the fork tool forks from the request in which the model called it', () => {
  it('fans out 30 children (past Claude Code’s 20) that read the parent’s cache, and returns their reports', async () => {
    const { mcp, sdk } = await setup();
    const request = parentRequest('fork 30 times: count the lines of notes.txt');
    const answer = await sdk.messages.stream(request).finalMessage();
    const call = answer.content.find((b) => b.type === 'tool_use');
    expect(call?.name).toBe('mcp__forkcache__fork');
    const directives = (call!.input as { directives: string[] }).directives;
    expect(directives).toHaveLength(30);

    const client = await mcpClient(mcp);
    const tools = await client.listTools();
    expect(tools.tools.map((t) => t.name).sort()).toEqual(['fork', 'fork_status']);
    // A client that asks for progress hears of the children's turns while it waits.
    const progress: { progress: number; message?: string | undefined }[] = [];
    const result = await client.callTool(
      { name: 'fork', arguments: { directives }, _meta: { 'claudecode/toolUseId': call!.id } },
      undefined,
      { onprogress: (p) => progress.push(p) },
    );
    await client.close();
    const text = (result.content as { type: string; text: string }[])[0]!.text;
    expect(result.isError, text).toBe(false);
    expect(progress.length).toBeGreaterThan(0);
    expect(progress.every((p, i) => i === 0 || p.progress > progress[i - 1]!.progress)).toBe(true);
    // each message says how many ended and what one child just did, as the AI SDK tool's preliminary results do
    const words =
      /^\d+ of 30 fork\(s\) ended; fork \d+ (started|called \S+( \(error\))?|finished turn \d+|ended: \S+)$/;
    for (const p of progress) expect(p.message).toMatch(words);
    expect(progress.some((p) => / fork \d+ started$/.test(p.message!))).toBe(true);
    expect(progress.some((p) => / fork \d+ ended: completed$/.test(p.message!))).toBe(true);
    expect(text.match(/^## fork \d+ \(completed\)/gm)).toHaveLength(30);
    expect(text).toContain('count the lines of notes.txt (17/30)');
    // the parent declares Claude Code's Read: the children run Claude Code's tool set
    expect(text).toMatch(/^forkcache: 30 fork\(s\), 30 completed; tool set claude-code; /);

    // The proxy saw the parent's turn and every child: the children read what the turn cached.
    const records = mcp.proxy.ledger.records().filter((r) => /^\/v1\/messages(\?|$)/.test(r.path));
    const parent = records[0]!;
    const cached = parent.usage!.cache_creation_input_tokens + parent.usage!.cache_read_input_tokens;
    expect(cached).toBeGreaterThan(400);
    const children = records.slice(1);
    expect(children.length).toBeGreaterThanOrEqual(30);
    const firsts = new Map<string, number>();
    for (const r of children)
      if (r.label && !firsts.has(r.label)) firsts.set(r.label, r.usage!.cache_read_input_tokens);
    expect(firsts.size).toBe(30);
    for (const [label, read] of firsts) expect(read / cached, label).toBeGreaterThanOrEqual(0.99);
    const fanouts = mcp.proxy.summary().fanouts;
    expect(fanouts.some((f) => f.requests >= 30)).toBe(true);
    expect(children.every((r) => r.kind === 'fork' && r.status === 200)).toBe(true);

    // The result's first line states the ledger's figures, each beside the total it is part of
    // (it once divided every turn's reads by the first requests' tokens: "efficiency 1.031").
    const line = text.split('\n')[0]!;
    const figures =
      /the (\d+) fan-out request\(s\) read (\d+) of at most (\d+) shared-prefix tokens from the cache \(efficiency (\d\.\d{3})\); all (\d+) request\(s\) read (\d+) of (\d+) input tokens from it/.exec(
        line,
      );
    expect(figures, line).not.toBeNull();
    const [fanOutRequests, sharedReads, maxReads, efficiency, requests, reads, input] = figures!.slice(1).map(Number);
    expect(fanOutRequests).toBeGreaterThanOrEqual(30);
    expect(sharedReads).toBeLessThanOrEqual(maxReads!);
    // Claude Code's turn cached the prefix before the fan-out (pre-warmed): every first request read it all
    expect(efficiency).toBe(1);
    // the proxy's ledger of the same requests, counted on its own
    const sum = (pick: (u: NonNullable<(typeof children)[number]['usage']>) => number): number =>
      children.reduce((acc, r) => acc + pick(r.usage!), 0);
    expect(requests).toBe(children.length);
    expect(reads).toBe(sum((u) => u.cache_read_input_tokens));
    expect(input).toBe(sum((u) => u.input_tokens + u.cache_creation_input_tokens + u.cache_read_input_tokens));
    expect(reads).toBeLessThanOrEqual(input!);
  });

  it('runs a background call and hands its reports to fork_status', async () => {
    const { mcp, sdk } = await setup();
    const answer = await sdk.messages.stream(parentRequest('fork a | b')).finalMessage();
    const call = answer.content.find((b) => b.type === 'tool_use')!;
    // Listening before the call: once every fork's request has ended the run settles; then ask until it says so (bounded).
    const ended = new Promise<void>((resolve) => {
      let forks = 0;
      mcp.proxy.on('exchange-end', (r) => r.kind === 'fork' && ++forks === 2 && resolve());
    });
    const client = await mcpClient(mcp);
    const started = await client.callTool({
      name: 'fork',
      arguments: { ...(call.input as object), background: true },
      _meta: { 'claudecode/toolUseId': call.id },
    });
    const text = (started.content as { text: string }[])[0]!.text;
    const runId = /as (run-[0-9a-f]{8})/.exec(text)?.[1];
    expect(runId, text).toBeDefined();
    const unknown = await client.callTool({ name: 'fork_status', arguments: { runId: 'run-nope' } });
    expect(unknown.isError).toBe(true);
    await ended;
    let status = '';
    for (let i = 0; i < 500 && !status.includes('## fork 2'); i++) {
      const res = await client.callTool({ name: 'fork_status', arguments: { runId } });
      status = (res.content as { text: string }[])[0]!.text;
    }
    await client.close();
    expect(status).toMatch(/^## fork 1 \(completed\): a$/m);
    expect(status).toMatch(/^## fork 2 \(completed\): b$/m);
  });

  it('runs the plan fields of a call: check per child, maxUsd as the spend cap', async () => {
    const { mcp, sdk } = await setup();
    const client = await mcpClient(mcp);
    const call = async (fields: Record<string, unknown>): Promise<string> => {
      const answer = await sdk.messages.stream(parentRequest('fork a | b')).finalMessage();
      const use = answer.content.find((b) => b.type === 'tool_use')!;
      const result = await client.callTool({
        name: 'fork',
        arguments: { ...(use.input as object), ...fields },
        _meta: { 'claudecode/toolUseId': use.id },
      });
      return (result.content as { text: string }[])[0]!.text;
    };
    // the check runs in each child's workspace when it reports done: a passing one keeps it completed
    expect(await call({ check: 'test -f notes.txt' })).toMatch(/2 fork\(s\), 2 completed/);
    const failing = await call({ check: 'test -f missing.txt' });
    expect(failing).toMatch(/2 fork\(s\), 0 completed/);
    expect(failing).toMatch(/^## fork 1 \(check_failed\): a$/m);
    // a cap below one request's price stops the fan-out before it spends
    const capped = await call({ maxUsd: 0.000001 });
    expect(capped).toMatch(/2 fork\(s\), 0 completed/);
    expect(capped).toMatch(/^## fork 2 \(capped\): b\nerror: the run's spend cap of \$0\.000001 was reached/m);
    await client.close();
  });

  it('runs a call with isolation: worktree, each child on its own git branch', async () => {
    open.emu = await startEmulator({ latency: 'off', script: 'claude-code', minCacheableTokens: 10 });
    const workspace = mkdtempSync(join(tmpdir(), 'forkcache-mcp-git-'));
    writeFileSync(join(workspace, 'notes.txt'), 'line one\nline two\n');
    const git = (...args: string[]): string =>
      execFileSync('git', args, {
        cwd: workspace,
        encoding: 'utf8',
        env: {
          ...process.env,
          GIT_AUTHOR_NAME: 't',
          GIT_AUTHOR_EMAIL: 't@t',
          GIT_COMMITTER_NAME: 't',
          GIT_COMMITTER_EMAIL: 't@t',
        },
      });
    git('init', '-q', '-b', 'main');
    git('add', '-A');
    git('commit', '-qm', 'init');
    const runDir = mkdtempSync(join(tmpdir(), 'forkcache-mcp-runs-'));
    open.mcp = await startMcpProxy({ upstream: open.emu.url, workspace, runsDir: runDir, maxThreads: 2 });
    const sdk = new Anthropic({ apiKey: KEY, baseURL: open.mcp.proxy.url, maxRetries: 0 });
    const answer = await sdk.messages.stream(parentRequest('fork a | b')).finalMessage();
    const use = answer.content.find((b) => b.type === 'tool_use')!;
    const client = await mcpClient(open.mcp);
    const result = await client.callTool({
      name: 'fork',
      arguments: { ...(use.input as object), isolation: 'worktree' },
      _meta: { 'claudecode/toolUseId': use.id },
    });
    await client.close();
    const text = (result.content as { text: string }[])[0]!.text;
    expect(text).toMatch(/2 fork\(s\), 2 completed/);
    const branches = git('branch', '--list', 'forkcache/*')
      .split('\n')
      .filter((l) => l.trim() !== '');
    expect(branches, text).toHaveLength(2);
  });

  it('refuses the MCP endpoint without the secret, or with a wrong one, and runs nothing', async () => {
    const { mcp, sdk } = await setup();
    const answer = await sdk.messages.stream(parentRequest('fork a | b')).finalMessage();
    const call = answer.content.find((b) => b.type === 'tool_use')!;
    for (const secret of ['', 'wrong', `${mcp.secret}x`]) {
      await expect(mcpClient(mcp, secret)).rejects.toThrow(/401|Unauthorized|bearer/i);
    }
    const bare = await fetch(mcp.mcpUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'fork', arguments: call.input },
      }),
    });
    expect(bare.status).toBe(401);
    // The call is still there for the real client: nothing claimed it.
    expect(mcp.proxy.ledger.records()).toHaveLength(1);
  });

  it('binds a call to its session: two sessions with equal arguments each fork their own conversation, with their own key', async () => {
    open.emu = await startEmulator({ latency: 'off', script: 'claude-code', minCacheableTokens: 10 });
    const seen: Seen[] = [];
    const upstream = await recordingUpstream(open.emu.url, seen);
    const workspace = mkdtempSync(join(tmpdir(), 'forkcache-mcp-sessions-'));
    writeFileSync(join(workspace, 'notes.txt'), 'line one\n');
    open.mcp = await startMcpProxy({ upstream, workspace, maxThreads: 2 });
    const sessions = ['alice', 'bob'].map((name) => ({
      name,
      key: `sk-ant-test-${name}-0123456789abcdef`,
      userId: `user_${name}_session_0000`,
    }));
    const uses = [];
    for (const s of sessions) {
      const sdk = new Anthropic({ apiKey: s.key, baseURL: open.mcp.proxy.url, maxRetries: 0 });
      const request = parentRequest('fork a | b');
      request.system = [{ type: 'text', text: `Conversation of ${s.name}. ${'x '.repeat(300)}`, cache_control: cc }];
      request.metadata = { user_id: s.userId };
      const answer = await sdk.messages.stream(request).finalMessage();
      uses.push(answer.content.find((b) => b.type === 'tool_use')!);
    }
    // the same arguments from both sessions: the attacker's precondition
    expect(uses[0]!.input).toEqual(uses[1]!.input);
    const client = await mcpClient(open.mcp);
    const text = async (result: Awaited<ReturnType<Client['callTool']>>) =>
      (result.content as { text: string }[])[0]!.text;

    // No id: it cannot be told whose call this is. Refused, and nothing is sent upstream.
    const before = seen.length;
    const ambiguous = await client.callTool({ name: 'fork', arguments: uses[1]!.input as Record<string, unknown> });
    expect(ambiguous.isError).toBe(true);
    expect(await text(ambiguous)).toMatch(/2 sessions made a fork call with these same arguments/);
    expect(seen.length).toBe(before);

    // Bob's id, then Alice's: each one's children carry that session's conversation, key and metadata.
    for (const i of [1, 0]) {
      const s = sessions[i]!;
      const from = seen.length;
      const result = await client.callTool({
        name: 'fork',
        arguments: uses[i]!.input as Record<string, unknown>,
        _meta: { 'claudecode/toolUseId': uses[i]!.id },
      });
      expect(result.isError, await text(result)).toBe(false);
      const children = seen.slice(from);
      expect(children.filter((c) => c.path === '/v1/messages').length).toBeGreaterThanOrEqual(2);
      for (const child of children) {
        expect(child.key).toBe(s.key);
        if (child.path !== '/v1/messages') continue; // the engine's count_tokens of its own tool set
        expect(child.body).toContain(`Conversation of ${s.name}.`);
        expect((JSON.parse(child.body) as { metadata?: { user_id?: string } }).metadata?.user_id).toBe(s.userId);
      }
    }
    await client.close();
  });

  it("keeps in every child what the session's request carried that changes what the model reads, as it was sent", async () => {
    open.emu = await startEmulator({ latency: 'off', script: 'claude-code', minCacheableTokens: 10 });
    const seen: Seen[] = [];
    const upstream = await recordingUpstream(open.emu.url, seen);
    const workspace = mkdtempSync(join(tmpdir(), 'forkcache-mcp-carry-'));
    writeFileSync(join(workspace, 'notes.txt'), 'line one\n');
    open.mcp = await startMcpProxy({ upstream, workspace, maxThreads: 2 });
    // Claude Code's settings (test/fixtures/claude-code/2.1.337/fork-fanout/wire/01.json), its betas as a header
    const settings = {
      thinking: { type: 'adaptive', display: 'omitted' },
      context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
      output_config: { effort: 'medium' },
      metadata: { user_id: '{"device_id":"d0","session_id":"s-carry"}' },
    };
    const betas = 'context-management-2025-06-27,effort-2025-11-24';
    const sdk = new Anthropic({
      apiKey: KEY,
      baseURL: open.mcp.proxy.url,
      maxRetries: 0,
      defaultHeaders: { 'anthropic-beta': betas },
    });
    const request = { ...parentRequest('fork a | b'), ...settings } as Anthropic.MessageCreateParamsStreaming;
    const answer = await sdk.messages.stream(request).finalMessage();
    const use = answer.content.find((b) => b.type === 'tool_use')!;
    const parentBody = seen.find((s) => s.path.startsWith('/v1/messages') && s.body.includes('fork a | b'))!.body;
    const from = seen.length;
    const client = await mcpClient(open.mcp);
    const result = await client.callTool({
      name: 'fork',
      arguments: use.input as Record<string, unknown>,
      _meta: { 'claudecode/toolUseId': use.id },
    });
    await client.close();
    expect(result.isError, (result.content as { text: string }[])[0]!.text).toBe(false);
    const children = seen.slice(from).filter((c) => /^\/v1\/messages(\?|$)/.test(c.path));
    expect(children.length).toBeGreaterThanOrEqual(2);
    for (const child of children) {
      expect(child.beta).toBe(betas);
      // each value byte for byte as the session sent it (the emulator hashes blocks in their received key order)
      for (const [key, value] of Object.entries(settings)) {
        const bytes = `"${key}":${JSON.stringify(value)}`;
        expect(parentBody).toContain(bytes);
        expect(child.body, key).toContain(bytes);
      }
    }
  });

  it("a stale, never-run fork call of the user's earlier session never gives its metadata to this session's children", async () => {
    // One user, one key, two Claude Code sessions: only metadata.user_id (which names the session) tells them apart.
    open.emu = await startEmulator({ latency: 'off', script: 'claude-code', minCacheableTokens: 10 });
    const seen: Seen[] = [];
    const upstream = await recordingUpstream(open.emu.url, seen);
    const workspace = mkdtempSync(join(tmpdir(), 'forkcache-mcp-stale-'));
    writeFileSync(join(workspace, 'notes.txt'), 'line one\n');
    open.mcp = await startMcpProxy({ upstream, workspace, maxThreads: 2 });
    const sdk = new Anthropic({ apiKey: KEY, baseURL: open.mcp.proxy.url, maxRetries: 0 });
    const sessions = ['earlier', 'current'].map((name) => ({ name, userId: `{"session_id":"${name}-0000"}` }));
    const uses = [];
    for (const s of sessions) {
      const request = parentRequest('fork a | b');
      request.system = [{ type: 'text', text: `Session ${s.name}. ${'x '.repeat(300)}`, cache_control: cc }];
      request.metadata = { user_id: s.userId };
      const answer = await sdk.messages.stream(request).finalMessage();
      uses.push(answer.content.find((b) => b.type === 'tool_use')!);
    }
    // the earlier session's call is never run (it moved on); the current one calls with the same arguments
    expect(uses[0]!.input).toEqual(uses[1]!.input);
    const client = await mcpClient(open.mcp);
    const text = (result: Awaited<ReturnType<Client['callTool']>>) => (result.content as { text: string }[])[0]!.text;
    const before = seen.length;
    const guessed = await client.callTool({ name: 'fork', arguments: uses[1]!.input as Record<string, unknown> });
    expect(text(guessed)).toMatch(/2 sessions made a fork call with these same arguments/);
    expect(seen.length).toBe(before);
    const result = await client.callTool({
      name: 'fork',
      arguments: uses[1]!.input as Record<string, unknown>,
      _meta: { 'claudecode/toolUseId': uses[1]!.id },
    });
    await client.close();
    expect(result.isError, text(result)).toBe(false);
    const children = seen.slice(before).filter((c) => /^\/v1\/messages(\?|$)/.test(c.path));
    expect(children.length).toBeGreaterThanOrEqual(2);
    for (const child of children) {
      expect(child.body).toContain('Session current.');
      expect(child.body).not.toContain('Session earlier.');
      expect((JSON.parse(child.body) as { metadata?: { user_id?: string } }).metadata?.user_id).toBe(
        sessions[1]!.userId,
      );
    }
  });

  it('answers a call the proxy never saw with an error the model can act on', async () => {
    open.emu = await startEmulator({ latency: 'off', script: 'claude-code' });
    open.mcp = await startMcpProxy({ upstream: open.emu.url, claimWaitMs: 1 });
    const client = await mcpClient(open.mcp);
    const result = await client.callTool({ name: 'fork', arguments: { directives: ['x'] } });
    await client.close();
    expect(result.isError).toBe(true);
    expect((result.content as { text: string }[])[0]!.text).toMatch(/not seen going through forkcache proxy/);
    const bad = await (await mcpClient(open.mcp)).callTool({ name: 'fork', arguments: { directives: [] } });
    expect(bad.isError).toBe(true);
    expect((bad.content as { text: string }[])[0]!.text).toMatch(/directives/);
  });
});
