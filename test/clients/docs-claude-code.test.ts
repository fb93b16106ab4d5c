// Claude Code and the docs' servers run as child processes (node:child_process, through test/docs-blocks.ts).
import { afterEach, describe, expect, it } from 'vitest';
import { blocksOf, onFreePort, quote, startBlock, type RunningBlock } from '../docs-blocks.ts';
import { claudeBin, claudeCode, clientHome } from './helpers.ts';

if (!claudeCode.ok) console.warn(`test/clients: ${claudeCode.why}`);

/*
 * docs/mcp.md's `claude -p` block (marked `docs-run: claude`) run as written against the docs'
 * own offline setup (its block with `--upstream`: the emulator with the Claude Code script behind
 * `forkcache proxy --mcp`), both in one project folder: the proxy writes mcp.json there and its
 * children work there, as a reader's would. Only the URL the docs show is replaced by the one the
 * proxy printed, and `claude` is the newest pinned build (scripts/clients/setup.sh).
 */
const blocks = blocksOf('docs/mcp.md');
const running: RunningBlock[] = [];
afterEach(async () => {
  for (const block of running.splice(0)) await block.stop();
});

describe('docs/mcp.md: the claude -p command runs as written', () => {
  it('finds the claude block and the offline setup it runs against', () => {
    expect(blocks.filter((b) => b.marker === 'claude').map((b) => b.code.split('\n')[0])).toEqual([
      'ANTHROPIC_BASE_URL=http://127.0.0.1:41263 claude -p "fork 5 times: count the lines of notes.txt" \\',
    ]);
    expect(blocks.filter((b) => b.code.includes('--upstream'))).toHaveLength(1);
  });

  it('Claude Code fans out 5 children through mcp__forkcache__fork, the emulator behind the proxy', async (ctx) => {
    if (!claudeCode.ok) return ctx.skip(claudeCode.why);
    const { project, env } = clientHome();
    const setup = blocks.find((b) => b.code.includes('--upstream'))!;
    const server = startBlock(await onFreePort(setup.code), project);
    running.push(server);
    await server.printed('forkcache mcp at');
    const url = /forkcache mcp at (http:\/\/\S+?)\/mcp;/.exec(server.output())?.[1];
    expect(url, server.output()).toBeDefined();

    const block = blocks.find((b) => b.marker === 'claude')!;
    expect(block.code).toContain('http://127.0.0.1:41263');
    const client = startBlock(block.code.replaceAll('http://127.0.0.1:41263', url!), project, {
      env,
      prelude: `claude() { ${quote(claudeBin)} "$@"; }`,
    });
    running.push(client);
    const ran = await client.ended;
    expect(ran.code, ran.output).toBe(0);
    // the emulator's Claude Code script counts the completed reports in the tool result it got back
    expect(ran.output).toContain('5 completed fork report(s) came back from mcp__forkcache__fork');
  });
});
