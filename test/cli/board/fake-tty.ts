import { createRequire } from 'node:module';

// the package's CommonJS entry: its `module` build is the browser's (vite would pick that)
export const { Terminal } = createRequire(import.meta.url)('@xterm/headless') as typeof import('@xterm/headless');

/** A terminal's scrollback and screen as lines (a wrapped row joined to its line), trailing blanks cut. */
export function screenLines(term: InstanceType<typeof Terminal>): string[] {
  const buffer = term.buffer.active;
  const out: string[] = [];
  for (let i = 0; i < buffer.length; i++) {
    const row = buffer.getLine(i);
    const text = row?.translateToString(true) ?? '';
    if (row?.isWrapped && out.length > 0) out[out.length - 1] += text;
    else out.push(text);
  }
  while (out.length > 0 && out.at(-1) === '') out.pop();
  return out;
}

/**
 * A TTY stream whose writes go to a headless terminal emulator (xterm.js) of `cols` × `rows`:
 * what a board writes is interpreted as a terminal would, resize included.
 */
export function emulatedTty(cols: number, rows: number) {
  // convertEol: a tty's line discipline turns \n into \r\n (ONLCR); here nothing else would
  const term = new Terminal({ cols, rows, scrollback: 100_000, allowProposedApi: true, convertEol: true });
  const listeners: (() => void)[] = [];
  const pending: Promise<void>[] = [];
  const stream = {
    isTTY: true,
    columns: cols,
    rows,
    write: (chunk: string) => (pending.push(new Promise<void>((r) => term.write(chunk, r))), true),
    on: (event: string, fn: () => void) => (event === 'resize' && listeners.push(fn), stream),
    off: () => stream,
  };
  return {
    stream: stream as unknown as NodeJS.WriteStream,
    /** Resize the terminal (it re-flows), then tell the stream's listeners, as a SIGWINCH does. */
    resize(c: number, r: number) {
      term.resize(c, r);
      stream.columns = c;
      stream.rows = r;
      for (const fn of listeners) fn();
    },
    /** Scrollback and screen, trailing blanks cut, once every write is parsed. */
    async lines(): Promise<string[]> {
      await Promise.all(pending);
      return screenLines(term);
    },
  };
}
