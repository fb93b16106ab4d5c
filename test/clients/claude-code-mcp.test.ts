// The real client runs as a child process (node:child_process, started by the test or its SDK): the integration project.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/start.ts';
import { startMcpProxy, type McpProxy } from '../../src/mcp/start.ts';
import { claudeCodeBuilds, clientHome, expectOneFanOut, runClient } from './helpers.ts';

for (const { claudeCode } of claudeCodeBuilds) if (!claudeCode.ok) console.warn(`test/clients: ${claudeCode.why}`);

const FORKS = 50;
/** What each build's test opened, closed at the end (both builds' servers, not only the last). */
const opened: { emu: Emulator; mcp?: McpProxy }[] = [];
afterAll(async () => {
  for (const { emu, mcp } of opened) {
    await mcp?.close(0);
    await emu.destroy();
  }
});

describe.each(claudeCodeBuilds)(
  'Claude Code $version through forkcache proxy --mcp',
  ({ version, bin, claudeCode }) => {
    describe.skipIf(!claudeCode.ok)(claudeCode.why, () => {
      it(`fans out ${FORKS} forks from its session through mcp__forkcache__fork, each reading the prefix it cached`, async () => {
        const { project, env } = clientHome();
        const open: (typeof opened)[number] = { emu: await startEmulator({ latency: 'off', script: 'claude-code' }) };
        opened.push(open);
        const mcp = await startMcpProxy({ upstream: open.emu.url, workspace: project });
        open.mcp = mcp;
        const config = join(mkdtempSync(join(tmpdir(), 'forkcache-mcp-config-')), 'mcp.json');
        writeFileSync(config, JSON.stringify({ mcpServers: mcp.mcpServers() }), { mode: 0o600 });

        const { code, out } = await runClient(
          bin,
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
          { ...env, ANTHROPIC_BASE_URL: mcp.proxy.url },
        );
        expect(code, out).toBe(0);
        // The scripted parent counts the completed reports in the tool result it got back.
        expect(out).toContain(`${FORKS} completed fork report(s) came back from mcp__forkcache__fork`);

        // the figure docs/mcp.md quotes, and the proxy's tree: Claude Code's turns, then the fan-out
        const { caller, html } = expectOneFanOut(
          mcp.proxy,
          FORKS,
          `claude-code-mcp (${version})`,
          join(project, '..', 'proxy.html'),
        );
        expect(caller.session, 'the calling turn is Claude Code’s own').toBeDefined();
        expect(html).toContain('count the lines of notes.txt (50/50)');
      });
    });
  },
);
