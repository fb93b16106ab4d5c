import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';
import { claudeCodeModel } from '../../../src/integrations/emulator/scripts/claude-code.ts';
import { findForkDirective, lastUserText } from '../../../src/integrations/emulator/scripts/conversation.ts';
import type { ScriptedModel } from '../../../src/integrations/emulator/scripts/types.ts';
import { startEmulator, type Emulator } from '../../../src/integrations/emulator/start.ts';
import { startMcpProxy, type McpProxy } from '../../../src/integrations/mcp/start.ts';
import { OUTPUT_INVALID_TAG } from '../../../src/core/wire/fork-text.ts';

// The MCP fork tool's `outputSchema`: a JSON Schema, checked by zod's reading of it. The parent
// is Claude Code's script; each child reports a JSON value: `ticket a` a matching one, `ticket b`
// a number where the schema wants a string, before and after its repair turn.

const cc = { type: 'ephemeral' } as const;
const open: { emu?: Emulator; mcp?: McpProxy } = {};
afterEach(async () => {
  await open.mcp?.close(0);
  await open.emu?.destroy();
  delete open.mcp;
  delete open.emu;
});

const repairs: string[] = [];
const jsonChildren: ScriptedModel = {
  name: 'json-children',
  respond(input) {
    const fork = findForkDirective(input.request.messages);
    if (!fork) return claudeCodeModel.respond(input);
    const last = lastUserText(input.request.messages)?.text ?? '';
    if (last.startsWith(`<${OUTPUT_INVALID_TAG}>`)) repairs.push(last);
    const value = fork.directive.startsWith('ticket a') ? { ticket: 'T-1' } : { ticket: 2 };
    const text = `Scope: ${fork.directive.split('\n')[0]}\nResult:\n\`\`\`json\n${JSON.stringify(value)}\n\`\`\`\nKey files: none\nFiles changed: none\nIssues: none`;
    return { content: [{ type: 'text', text }], stop_reason: 'end_turn' };
  },
};

describe('forkcache proxy --mcp: the fork tool with an outputSchema', () => {
  it('prints each matching value, and ends a child that never matches invalid_output after one repair', async () => {
    open.emu = await startEmulator({
      latency: 'off',
      scripts: [jsonChildren],
      script: 'json-children',
      minCacheableTokens: 10,
    });
    const workspace = mkdtempSync(join(tmpdir(), 'forkcache-mcp-output-'));
    const runsDir = join(workspace, '.runs');
    open.mcp = await startMcpProxy({ upstream: open.emu.url, workspace, runsDir, maxThreads: 2 });
    const sdk = new Anthropic({ apiKey: 'sk-ant-test-output', baseURL: open.mcp.proxy.url, maxRetries: 0 });
    const answer = await sdk.messages
      .stream({
        model: 'claude-sonnet-4-6',
        max_tokens: 1024,
        stream: true,
        system: [{ type: 'text', text: `You are an agent. ${'note '.repeat(400)}`, cache_control: cc }],
        tools: [
          {
            name: 'mcp__forkcache__fork',
            description: 'Fork',
            input_schema: { type: 'object', properties: { directives: { type: 'array', items: { type: 'string' } } } },
          },
        ],
        messages: [{ role: 'user', content: [{ type: 'text', text: 'fork ticket a | ticket b', cache_control: cc }] }],
      })
      .finalMessage();
    const call = answer.content.find((b) => b.type === 'tool_use')!;
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(open.mcp.mcpUrl), {
        requestInit: { headers: { Authorization: `Bearer ${open.mcp.secret}` } },
      }),
    );
    const outputSchema = {
      type: 'object',
      properties: { ticket: { type: 'string' } },
      required: ['ticket'],
    };
    const result = await client.callTool({
      name: 'fork',
      arguments: { ...(call.input as object), outputSchema },
      _meta: { 'claudecode/toolUseId': call.id },
    });
    const bad = await client.callTool({
      name: 'fork',
      arguments: { ...(call.input as object), outputSchema: { type: 'no-such-type' } },
      _meta: { 'claudecode/toolUseId': call.id },
    });
    await client.close();
    const text = (result.content as { text: string }[])[0]!.text;
    expect(result.isError, text).toBe(false);
    expect(text).toMatch(/^## fork 1 \(completed\): ticket a\noutput: \{"ticket":"T-1"\}$/m);
    expect(text).toMatch(/^## fork 2 \(invalid_output\): ticket b$/m);
    // the run's summary.json keeps the value beside the fork's status
    const fanOut = /fan-out (fo\S+);/.exec(text)![1]!;
    const summary = JSON.parse(readFileSync(join(runsDir, fanOut, 'summary.json'), 'utf8'));
    expect(summary.fork_results.map((f: { status: string; output?: unknown }) => [f.status, f.output])).toEqual([
      ['completed', { ticket: 'T-1' }],
      ['invalid_output', undefined],
    ]);
    // one repair turn, naming the field
    expect(repairs).toHaveLength(1);
    expect(repairs[0]).toContain('ticket:');
    // a schema zod cannot read is refused before the call is claimed, naming the field
    expect(bad.isError).toBe(true);
    expect((bad.content as { text: string }[])[0]!.text).toMatch(/^outputSchema: not a JSON Schema/);
  });
});
