import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

// the package's CommonJS entry: its `module` build is the browser's (vite would pick that)
const { Terminal } = createRequire(import.meta.url)('@xterm/headless') as typeof import('@xterm/headless');

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
    `exec ${[process.execPath, '--import', 'tsx', 'src/cli/main.ts', ...args].map(quote).join(' ')}`,
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
      void Promise.all(written).then(() => {
        const buffer = term.buffer.active;
        const lines: string[] = [];
        for (let i = 0; i < buffer.length; i++) {
          // a row the terminal wrapped onto is part of the line above
          const row = buffer.getLine(i);
          const text = row?.translateToString(true) ?? '';
          if (row?.isWrapped && lines.length > 0) lines[lines.length - 1] += text;
          else lines.push(text);
        }
        while (lines.length > 0 && lines.at(-1) === '') lines.pop();
        resolve({ code, lines, raw });
      });
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
