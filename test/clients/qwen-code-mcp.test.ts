// The real client runs as a child process (node:child_process, started by the test): the integration project.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/integrations/emulator/start.ts';
import { startMcpProxy, type McpProxy } from '../../src/integrations/mcp/start.ts';
import { FORK_BOILERPLATE_OPEN } from '../../src/core/wire/fork-text.ts';
import { clientHome, expectOneFanOut, node22Bin, qwenCode, qwenEntry, runClient } from './helpers.ts';

if (!qwenCode.ok) console.warn(`test/clients: ${qwenCode.why}`);

/*
 * Qwen Code 0.24.4 (on Node 22, Anthropic wire) through `forkcache proxy --mcp`: its MCP tools
 * are deferred, so the scripted model reads the fork tool's schema with `tool_search` and calls
 * it through `tool_call {name: "mcp__forkcache__fork", arguments}`; the proxy captures that call
 * from the answer, and Qwen Code's MCP call (which carries no tool_use id) claims it by its
 * arguments. The children run Qwen Code's own tools (`read_file` on the project's file).
 */
const FORKS = 50;
const FORK_TOOL = 'mcp__forkcache__fork';
const open: { emu?: Emulator; mcp?: McpProxy } = {};
afterAll(async () => {
  await open.mcp?.close(0);
  await open.emu?.destroy();
});

interface LoggedRequest {
  type: string;
  seq: number;
  path: string;
  body?: { messages?: { role: string; content: unknown }[] };
}
type Block = {
  type: string;
  id?: string;
  name?: string;
  input?: Record<string, unknown>;
  tool_use_id?: string;
  content?: unknown;
};

const blocks = (content: unknown): Block[] => (Array.isArray(content) ? (content as Block[]) : []);
const resultText = (block: Block): string =>
  typeof block.content === 'string'
    ? block.content
    : blocks(block.content)
        .map((b) => (b as { text?: string }).text ?? '')
        .join('\n');

/** Every tool a fork started, by name, from the transcripts of the runs directory. */
function forkToolStarts(runsDir: string): string[] {
  const names: string[] = [];
  for (const fanout of readdirSync(runsDir).filter((d) => existsSync(join(runsDir, d, 'forks'))))
    for (const file of readdirSync(join(runsDir, fanout, 'forks')).filter((f) => f.endsWith('.jsonl')))
      for (const line of readFileSync(join(runsDir, fanout, 'forks', file), 'utf8')
        .trim()
        .split('\n')) {
        const event = JSON.parse(line) as { type?: string; name?: string };
        if (event.type === 'tool-start' && event.name) names.push(event.name);
      }
  return names;
}

describe.skipIf(!qwenCode.ok)(`Qwen Code through forkcache proxy --mcp (${qwenCode.why})`, () => {
  it(`fans out ${FORKS} forks through ${FORK_TOOL} via tool_call, each reading the prefix Qwen Code cached`, async () => {
    const { project, env } = clientHome();
    const work = mkdtempSync(join(tmpdir(), 'forkcache-qwen-mcp-'));
    const runsDir = join(work, 'runs');
    const logDir = join(work, 'log');
    open.emu = await startEmulator({ latency: 'off', script: 'claude-code' });
    open.mcp = await startMcpProxy({ upstream: open.emu.url, workspace: project, runsDir, logDir });
    // Qwen Code reads its MCP servers from settings.json (`httpUrl`: Streamable HTTP). `trust`
    // lets the tool run without a confirmation, which `-p` cannot ask for.
    const { forkcache } = open.mcp.mcpServers();
    mkdirSync(join(env['HOME']!, '.qwen'), { recursive: true });
    writeFileSync(
      join(env['HOME']!, '.qwen', 'settings.json'),
      JSON.stringify({
        mcpServers: {
          forkcache: { httpUrl: forkcache!.url, headers: forkcache!.headers, trust: true, timeout: 1_800_000 },
        },
      }),
      { mode: 0o600 },
    );

    const { code, out } = await runClient(
      node22Bin,
      [qwenEntry, '--auth-type', 'anthropic', '-p', `fork ${FORKS} times: read notes.txt and report`],
      project,
      {
        ...env,
        ANTHROPIC_BASE_URL: open.mcp.proxy.url,
        ANTHROPIC_MODEL: 'claude-opus-5-5',
      },
    );
    expect(code, out).toBe(0);
    // The scripted parent counts the completed reports in the tool result it got back.
    expect(out).toContain(`${FORKS} completed fork report(s) came back from ${FORK_TOOL}`);

    // What Qwen Code sent: the call went through its tool_call bridge, and its next request
    // carries the reports as that call's tool result.
    const logged = readFileSync(join(logDir, 'exchanges.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as LoggedRequest)
      // Qwen Code's own turns: not the children's, nor forkcache's token counts of their prefix
      // (both answer the call with a placeholder)
      .filter(
        (l) =>
          l.type === 'request' &&
          /^\/v1\/messages(\?|$)/.test(l.path) &&
          l.body?.messages &&
          !JSON.stringify(l.body).includes(FORK_BOILERPLATE_OPEN),
      );
    const bridged = logged
      .flatMap((l) => l.body!.messages!.filter((m) => m.role === 'assistant').flatMap((m) => blocks(m.content)))
      .find((b) => b.type === 'tool_use' && b.name === 'tool_call' && b.input?.['name'] === FORK_TOOL);
    expect(bridged, 'Qwen Code called the fork tool through tool_call').toBeDefined();
    const answered = logged
      .flatMap((l) => l.body!.messages!.flatMap((m) => blocks(m.content)))
      .find((b) => b.type === 'tool_result' && b.tool_use_id === bridged!.id);
    const text = resultText(answered!);
    expect(text).toMatch(new RegExp(`^forkcache: ${FORKS} fork\\(s\\), ${FORKS} completed; tool set qwen-code;`, 'm'));
    expect(text.match(/^## fork \d+ \(completed\)/gm)).toHaveLength(FORKS);
    expect(text).toContain('notes.txt has 2 line(s)');

    // The children ran Qwen Code's tools: each read the file with read_file.
    const started = forkToolStarts(runsDir);
    expect(started.filter((n) => n === 'read_file')).toHaveLength(FORKS);
    expect(started.filter((n) => n !== 'read_file')).toEqual([]);

    // the figure docs/mcp.md quotes, and the proxy's tree: Qwen Code's turns, then the fan-out
    const { html } = expectOneFanOut(open.mcp.proxy, FORKS, 'qwen-code-mcp', join(work, 'proxy.html'));
    expect(html).toContain(`read notes.txt and report (${FORKS}/${FORKS})`);
  });
});
