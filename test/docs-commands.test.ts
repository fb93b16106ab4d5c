import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliArgs } from './cli/run-cli.ts';

/*
 * The shell blocks of docs/mcp.md and docs/ai-sdk.md that a reader is meant to run are marked
 * `<!-- docs-run: … -->` before the block, and run here as written, so the docs cannot drift:
 * `npx forkcache` runs this checkout's command and `npx tsx` the repository's tsx (no
 * download). The comment lines right after a command are what it prints (numbers may differ).
 * Markers:
 *   `until "TEXT"`: the block starts a server; once its output holds TEXT it is stopped (SIGTERM
 *     to the block's process group); it runs in an empty folder, and port 4000 (the emulator's
 *     in the docs) is a free port here, so parallel runs do not collide
 *   `in the clone`: the block runs in the repository to its end and exits 0
 * Blocks that need a program this machine has no copy of (`claude`) are not marked.
 */

const ROOT = resolve(import.meta.dirname, '..');
const TSX = join(createRequire(import.meta.url).resolve('tsx'), '../cli.mjs');
const MARKED = /<!-- docs-run: (.+?) -->\s*\n```(?:sh|bash)\n([\s\S]*?)\n```/g;

interface Block {
  doc: string;
  marker: string;
  code: string;
}

function blocksOf(doc: string): Block[] {
  const text = readFileSync(join(ROOT, doc), 'utf8');
  return [...text.matchAll(MARKED)].map((m) => ({ doc, marker: m[1]!, code: m[2]! }));
}

const quote = (arg: string): string => `'${arg.replace(/'/g, "'\\''")}'`;

/** `npx forkcache` and `npx tsx` as this checkout has them; any other npx is refused (no downloads). */
const PRELUDE = [
  'npx() {',
  '  case "$1" in',
  `    forkcache) shift; ${[process.execPath, ...cliArgs()].map(quote).join(' ')} "$@";;`,
  `    tsx) shift; ${[process.execPath, TSX].map(quote).join(' ')} "$@";;`,
  '    *) echo "npx $1: not run by the docs test" >&2; return 127;;',
  '  esac',
  '}',
].join('\n');

/** Each command with the comment lines after it (what it prints); in until mode, up to the first in the foreground. */
function expectedOutputs(code: string, until: boolean): string[] {
  const lines = code.split('\n');
  const expected: string[] = [];
  let checking = true;
  for (let i = 0; i < lines.length && checking; i++) {
    const line = lines[i]!.trim();
    if (line === '' || line.startsWith('#')) continue;
    for (let j = i + 1; j < lines.length && lines[j]!.trim().startsWith('# '); j++)
      expected.push(lines[j]!.trim().slice(2));
    // bash stops at a server in the foreground: nothing after it runs
    if (until && !line.endsWith('&')) checking = false;
  }
  return expected;
}

/** An expected line as a pattern: its words as written, each number any number. */
function linePattern(line: string): RegExp {
  const escaped = line.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/\d[\d,]*(\\\.\d+)?/g, '[\\d,]+(\\.\\d+)?');
  return new RegExp(`^${escaped}$`, 'm');
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  await new Promise((done) => server.close(done));
  return port;
}

interface Ran {
  output: string;
  code: number | null;
  cwd: string;
}

/** Run a block with bash in its own process group; `until`: stop the group once the output holds it. */
async function runBlock(code: string, cwd: string, until?: string): Promise<Ran> {
  const child = spawn('bash', ['-c', `${PRELUDE}\n${code}`], {
    cwd,
    detached: true,
    env: { ...process.env, ANTHROPIC_API_KEY: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let stopped = false;
  const onData = (chunk: Buffer): void => {
    output += chunk.toString('utf8');
    if (until !== undefined && !stopped && output.includes(until)) {
      stopped = true;
      process.kill(-child.pid!, 'SIGTERM');
    }
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  // every process of the group holds the pipes: closed, they have all exited
  const exit = await new Promise<number | null>((done) => child.on('close', (status) => done(status)));
  return { output, code: exit, cwd };
}

describe('the commands of docs/mcp.md and docs/ai-sdk.md run as written', () => {
  const blocks = [...blocksOf('docs/mcp.md'), ...blocksOf('docs/ai-sdk.md')];

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
        const port = String(await freePort());
        const code = block.code.replace(/(--port |127\.0\.0\.1:)4000\b/g, `$1${port}`);
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
