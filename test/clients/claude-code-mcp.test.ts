// The real client runs as a child process (node:child_process, started by the test or its SDK): the integration project.
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/integrations/emulator/start.ts';
import { startMcpProxy, type McpProxy } from '../../src/integrations/mcp/start.ts';
import { probeBubblewrap } from '../../src/core/tools/sandbox/bwrap-probe.ts';
import { claudeCodeBuilds, clientHome, expectOneFanOut, runClient } from './helpers.ts';

for (const { claudeCode } of claudeCodeBuilds) if (!claudeCode.ok) console.warn(`test/clients: ${claudeCode.why}`);

const FORKS = 50;

/** A request as the emulator's exchange log keeps it. */
interface LoggedRequest {
  url: string;
  headers: Record<string, string | undefined>;
  body: Record<string, unknown>;
}
/** Children given Bash by `--mcp-allow-bash` (issue 45: 30 or more). */
const BASH_FORKS = 30;
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
        const logDir = mkdtempSync(join(tmpdir(), 'forkcache-mcp-log-'));
        const open: (typeof opened)[number] = {
          emu: await startEmulator({ latency: 'off', script: 'claude-code', logDir }),
        };
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

        // Every child sent what Claude Code's turns carried that changes what the model reads,
        // as Claude Code sent it: context_management, thinking, output_config, its betas.
        const logged = readdirSync(logDir)
          .filter((f) => f.endsWith('.json'))
          .map((f) => (JSON.parse(readFileSync(join(logDir, f), 'utf8')) as { request: LoggedRequest }).request)
          .filter((r) => /^\/v1\/messages(\?|$)/.test(r.url));
        const isChild = (r: LoggedRequest): boolean => JSON.stringify(r.body).includes('<fork-boilerplate>');
        const own = logged.filter((r) => !isChild(r) && r.body['context_management'] !== undefined).at(-1)!;
        expect(own, 'Claude Code sends context_management').toBeDefined();
        const children = logged.filter(isChild);
        expect(children.length).toBeGreaterThanOrEqual(FORKS);
        for (const child of children) {
          for (const key of ['context_management', 'thinking', 'output_config'])
            expect(JSON.stringify(child.body[key]), key).toBe(JSON.stringify(own.body[key]));
          expect(child.headers['anthropic-beta']).toBe(own.headers['anthropic-beta']);
        }
      });

      it(`with --mcp-allow-bash its ${BASH_FORKS} children run Bash in bubblewrap: no loopback, no key`, async (ctx) => {
        const bwrap = probeBubblewrap();
        if (!('file' in bwrap)) return ctx.skip(`needs bubblewrap: ${bwrap.missing}`);
        // a server on the proxy's loopback, reachable from this process
        let hits = 0;
        const listener = createServer((_req, res) => {
          hits += 1;
          res.end('reached\n');
        });
        await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
        const port = (listener.address() as AddressInfo).port;
        const saved = process.env['ANTHROPIC_API_KEY'];
        // the proxy's own key, in its environment: no child's command may read it
        process.env['ANTHROPIC_API_KEY'] = 'sk-ant-proxy-env-key-not-for-children';
        try {
          expect(await (await fetch(`http://127.0.0.1:${port}/`)).text()).toBe('reached\n');
          const { project, env } = clientHome();
          const open: (typeof opened)[number] = { emu: await startEmulator({ latency: 'off', script: 'claude-code' }) };
          opened.push(open);
          const runsDir = mkdtempSync(join(tmpdir(), 'forkcache-mcp-bash-runs-'));
          const mcp = await startMcpProxy({ upstream: open.emu.url, workspace: project, runsDir, allowBash: true });
          open.mcp = mcp;
          const config = join(mkdtempSync(join(tmpdir(), 'forkcache-mcp-config-')), 'mcp.json');
          writeFileSync(config, JSON.stringify({ mcpServers: mcp.mcpServers() }), { mode: 0o600 });
          const command = `echo "$(curl -s -m 5 http://127.0.0.1:${port}/ >/dev/null && echo reached || echo unreachable) key=\${ANTHROPIC_API_KEY:-none}"`;
          const { code, out } = await runClient(
            bin,
            [
              '-p',
              `fork ${BASH_FORKS} times: run \`${command}\` and report`,
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
          expect(out).toContain(`${BASH_FORKS} completed fork report(s) came back from mcp__forkcache__fork`);
          // every child ran the command (a refused Bash ends the child not completed), in its own
          // network namespace and environment
          const transcripts = readdirSync(runsDir, { recursive: true, encoding: 'utf8' }).filter((f) =>
            /forks\/[^/]+\.jsonl$/.test(f),
          );
          expect(transcripts).toHaveLength(BASH_FORKS);
          for (const file of transcripts) {
            const text = readFileSync(join(runsDir, file), 'utf8');
            expect(text).toContain('unreachable key=none');
            expect(text).not.toContain('sk-ant-proxy-env-key');
          }
          expect(hits).toBe(1);
        } finally {
          if (saved === undefined) delete process.env['ANTHROPIC_API_KEY'];
          else process.env['ANTHROPIC_API_KEY'] = saved;
          await new Promise((resolve) => listener.close(resolve));
        }
      });
    });
  },
);
