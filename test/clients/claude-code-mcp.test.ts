// The real client runs as a child process (node:child_process, started by the test or its SDK): the integration project.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/start.ts';
import { startMcpProxy, type McpProxy } from '../../src/mcp/start.ts';
import { claudeBin, claudeCode, clientHome, expectOneFanOut, runClient } from './helpers.ts';

if (!claudeCode.ok) console.warn(`test/clients: ${claudeCode.why}`);

const FORKS = 50;
const open: { emu?: Emulator; mcp?: McpProxy } = {};
afterAll(async () => {
  await open.mcp?.close(0);
  await open.emu?.destroy();
});

describe.skipIf(!claudeCode.ok)(`Claude Code through forkcache proxy --mcp (${claudeCode.why})`, () => {
  it(`fans out ${FORKS} forks from its session through mcp__forkcache__fork, each reading the prefix it cached`, async () => {
    const { project, env } = clientHome();
    open.emu = await startEmulator({ latency: 'off', script: 'claude-code' });
    open.mcp = await startMcpProxy({ upstream: open.emu.url, workspace: project });
    const config = join(mkdtempSync(join(tmpdir(), 'forkcache-mcp-config-')), 'mcp.json');
    writeFileSync(config, JSON.stringify({ mcpServers: open.mcp.mcpServers() }), { mode: 0o600 });

    const { code, out } = await runClient(
      claudeBin,
      [
        '-p',
        `fork ${FORKS} times: count the lines of notes.txt`,
        '--mcp-config',
        config,
        '--allowedTools',
        'mcp__forkcache__fork',
        'ToolSearch',
      ],
      project,
      { ...env, ANTHROPIC_BASE_URL: open.mcp.proxy.url },
    );
    expect(code, out).toBe(0);
    // The scripted parent counts the completed reports in the tool result it got back.
    expect(out).toContain(`${FORKS} completed fork report(s) came back from mcp__forkcache__fork`);

    // the figure docs/mcp.md quotes, and the proxy's tree: Claude Code's turns, then the fan-out
    const { caller, html } = expectOneFanOut(
      open.mcp.proxy,
      FORKS,
      'claude-code-mcp',
      join(project, '..', 'proxy.html'),
    );
    expect(caller.session, 'the calling turn is Claude Code’s own').toBeDefined();
    expect(html).toContain('count the lines of notes.txt (50/50)');
  });
});
