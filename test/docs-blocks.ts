import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { cliArgs } from './cli/run-cli.ts';

/*
 * The shell blocks of the docs that a reader is meant to run, marked `<!-- docs-run: … -->`
 * before the block, read and run as written (test/docs-commands.test.ts; the ones that need a
 * real client, test/clients/docs-claude-code.test.ts). `npx forkcache` runs this checkout's
 * command and `npx tsx` the repository's tsx (no download).
 */

export const ROOT = resolve(import.meta.dirname, '..');
const TSX = join(createRequire(import.meta.url).resolve('tsx'), '../cli.mjs');
const MARKED = /<!-- docs-run: (.+?) -->\s*\n```(?:sh|bash)\n([\s\S]*?)\n```/g;

interface Block {
  doc: string;
  marker: string;
  code: string;
}

export function blocksOf(doc: string): Block[] {
  const text = readFileSync(join(ROOT, doc), 'utf8');
  return [...text.matchAll(MARKED)].map((m) => ({ doc, marker: m[1]!, code: m[2]! }));
}

export const quote = (arg: string): string => `'${arg.replace(/'/g, "'\\''")}'`;

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
export function expectedOutputs(code: string, until: boolean): string[] {
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
export function linePattern(line: string): RegExp {
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

/** The block with port 4000 (the emulator's in the docs) replaced by a free one, so parallel runs do not collide. */
export async function onFreePort(code: string): Promise<string> {
  const port = String(await freePort());
  return code.replace(/(--port |127\.0\.0\.1:)4000\b/g, `$1${port}`);
}

export interface Ran {
  output: string;
  code: number | null;
  cwd: string;
}

/** A block running in bash, in its own process group. */
export interface RunningBlock {
  /** What it has printed so far (both streams). */
  output(): string;
  /** Resolves once its output holds `text`; rejects if it ends first. */
  printed(text: string): Promise<void>;
  /** SIGTERM to its whole group; resolves once every process of it has exited. */
  stop(): Promise<Ran>;
  /** Resolves when every process of its group has exited. */
  ended: Promise<Ran>;
}

/**
 * Start a block with bash in its own process group. `env` replaces the environment (default the
 * test's, with no `ANTHROPIC_API_KEY`); `prelude` is more shell put before it (a function standing
 * in for a program the docs name).
 */
export function startBlock(
  code: string,
  cwd: string,
  options: { env?: Record<string, string | undefined>; prelude?: string } = {},
): RunningBlock {
  const child = spawn('bash', ['-c', `${PRELUDE}\n${options.prelude ?? ''}\n${code}`], {
    cwd,
    detached: true,
    env: options.env ?? { ...process.env, ANTHROPIC_API_KEY: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const waiters: { text: string; done: () => void }[] = [];
  const onData = (chunk: Buffer): void => {
    output += chunk.toString('utf8');
    for (const w of waiters.filter((w) => output.includes(w.text))) {
      waiters.splice(waiters.indexOf(w), 1);
      w.done();
    }
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  // every process of the group holds the pipes: closed, they have all exited
  const ended = new Promise<Ran>((done) => child.on('close', (status) => done({ output, code: status, cwd })));
  let exited = false;
  void ended.then(() => (exited = true));
  return {
    output: () => output,
    printed: (text) =>
      output.includes(text)
        ? Promise.resolve()
        : Promise.race([
            new Promise<void>((done) => waiters.push({ text, done })),
            ended.then((ran) => {
              if (!ran.output.includes(text))
                throw new Error(
                  `the block ended (${ran.code}) before printing ${JSON.stringify(text)}:\n${ran.output}`,
                );
            }),
          ]),
    stop: () => {
      try {
        if (!exited) process.kill(-child.pid!, 'SIGTERM');
      } catch {
        // the group ended on its own meanwhile
      }
      return ended;
    },
    ended,
  };
}

/** Run a block to its end; `until`: stop its group once the output holds it. */
export async function runBlock(code: string, cwd: string, until?: string): Promise<Ran> {
  const block = startBlock(code, cwd);
  if (until === undefined) return block.ended;
  await block.printed(until).catch(() => undefined);
  return block.stop();
}
