// Each block runs in bash as a child process (node:child_process, through test/docs-blocks.ts): the integration project.
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { blocksOf, expectedOutputs, linePattern, onFreePort, ROOT, runBlock, type Ran } from './docs-blocks.ts';

/*
 * The shell blocks of docs/mcp.md and docs/ai-sdk.md that a reader is meant to run are marked
 * `<!-- docs-run: … -->` before the block, and run here as written (test/docs-blocks.ts), so the
 * docs cannot drift. The comment lines right after a command are what it prints (numbers may differ).
 * Markers:
 *   `until "TEXT"`: the block starts a server; once its output holds TEXT it is stopped (SIGTERM
 *     to the block's process group); it runs in an empty folder, and port 4000 (the emulator's
 *     in the docs) is a free port here, so parallel runs do not collide
 *   `in the clone`: the block runs in the repository to its end and exits 0
 *   `claude`: the block runs Claude Code, which scripts/clients/setup.sh installs: run by
 *     test/clients/docs-claude-code.test.ts, in the slow tier with the other real-client tests
 */

describe('the commands of docs/mcp.md and docs/ai-sdk.md run as written', () => {
  const blocks = [...blocksOf('docs/mcp.md'), ...blocksOf('docs/ai-sdk.md')].filter((b) => b.marker !== 'claude');

  it('finds the marked blocks', () => {
    expect(blocks.map((b) => `${b.doc}: ${b.marker}`)).toEqual([
      'docs/mcp.md: until "forkcache mcp at"',
      'docs/mcp.md: until "forkcache mcp at"',
      'docs/ai-sdk.md: in the clone',
    ]);
  });

  for (const [i, block] of blocks.entries()) {
    it(`${block.doc}, block ${i + 1}: ${block.code.split('\n')[0]}`, async () => {
      const until = /^until "(.+)"$/.exec(block.marker)?.[1];
      let ran: Ran;
      if (until !== undefined) {
        const code = await onFreePort(block.code);
        ran = await runBlock(code, mkdtempSync(join(tmpdir(), 'forkcache-docs-')), until);
        expect(ran.output, ran.output).toContain(until);
        // --mcp-config: the client's file, mode 0600, naming the URL the command printed
        const config = join(ran.cwd, 'mcp.json');
        expect(statSync(config).mode & 0o777).toBe(0o600);
        const url = /forkcache mcp at (\S+?);/.exec(ran.output)?.[1];
        expect(JSON.parse(readFileSync(config, 'utf8')).mcpServers.forkcache.url).toBe(url);
        // --report FILE: written at exit
        if (block.code.includes('--report proxy.html'))
          expect(statSync(join(ran.cwd, 'proxy.html')).size).toBeGreaterThan(0);
      } else {
        expect(block.marker).toBe('in the clone');
        ran = await runBlock(block.code, ROOT);
        expect(ran.code, ran.output).toBe(0);
      }
      for (const line of expectedOutputs(block.code, until !== undefined))
        expect(ran.output, `${block.doc}: "${line}"`).toMatch(linePattern(line));
    });
  }
});
