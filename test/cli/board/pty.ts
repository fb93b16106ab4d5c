import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { screenLines, Terminal } from './fake-tty.ts';
import { cliArgs } from '../run-cli.ts';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

const quote = (word: string): string => `'${word.replaceAll("'", `'\\''`)}'`;

/**
 * `forkcache ARGS` in a real pseudo-terminal (util-linux `script`) of `rows` × `cols`, its
 * output fed to a headless terminal emulator (xterm.js): the screen and scrollback as a
 * person would see them. `type` writes keys into the terminal (`\x03` is Ctrl-C: the tty
 * sends SIGINT, as a keyboard does); `onOutput` sees the raw output as it comes.
 */
export function forkcacheInPty(
  args: string[],
  options: { rows: number; cols: number; env?: Record<string, string | undefined> },
): {
  type(keys: string): void;
  output(): string;
  exited: Promise<{ code: number | null; lines: string[]; raw: string }>;
  /** Resolves once the raw output so far satisfies `test`. */
  until(test: (raw: string) => boolean): Promise<void>;
} {
  const command = [
    `stty rows ${options.rows} cols ${options.cols}`,
    `exec ${[process.execPath, ...cliArgs(...args)].map(quote).join(' ')}`,
  ].join(' && ');
  const child = spawn('script', ['-qfec', command, '/dev/null'], {
    cwd: ROOT,
    env: { ...process.env, ANTHROPIC_API_KEY: undefined, NO_COLOR: undefined, ...options.env } as NodeJS.ProcessEnv,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const term = new Terminal({ rows: options.rows, cols: options.cols, scrollback: 100_000, allowProposedApi: true });
  let raw = '';
  const waiters: { test: (raw: string) => boolean; resolve: () => void }[] = [];
  const written: Promise<void>[] = [];
  child.stdout.on('data', (chunk: Buffer) => {
    raw += chunk.toString('utf8');
    written.push(new Promise((resolve) => term.write(chunk, resolve)));
    for (const w of waiters.splice(0)) (w.test(raw) ? w.resolve : () => waiters.push(w))();
  });
  const exited = new Promise<{ code: number | null; lines: string[]; raw: string }>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      void Promise.all(written).then(() => resolve({ code, lines: screenLines(term), raw }));
    });
  });
  return {
    type: (keys) => void child.stdin.write(keys),
    output: () => raw,
    exited,
    until: (test) =>
      new Promise((resolve, reject) => {
        if (test(raw)) return resolve();
        waiters.push({ test, resolve });
        child.once('close', () =>
          test(raw) ? resolve() : reject(new Error(`the run ended first:\n${raw.slice(-2000)}`)),
        );
      }),
  };
}
