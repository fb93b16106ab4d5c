import cliTruncate from 'cli-truncate';
import stringWidth from 'string-width';

// ECMA-48 controls: cursor up, erase to the end of the screen, cursor visibility.
const up = (n: number): string => (n > 0 ? `\x1b[${n}A` : '');
const ERASE_DOWN = '\x1b[J';
const HIDE_CURSOR = '\x1b[?25l';
const SHOW_CURSOR = '\x1b[?25h';

/** Cut a line (colour codes included) to `columns` cells. */
export function fit(line: string, columns: number, position: 'end' | 'start' = 'end'): string {
  if (stringWidth(line) <= columns) return line;
  // a wide character at the cut can leave the result a cell over: cut again until it fits
  for (let target = Math.max(1, columns); target > 0; target--) {
    const cut = cliTruncate(line, target, { position });
    if (stringWidth(cut) <= columns) return cut;
  }
  return '';
}

/**
 * A fixed-height area redrawn at the bottom of a terminal, with lines that scroll above it.
 * Each frame erases the previous one (cursor up over the rows it took, erase down) and writes
 * the lines printed since, then the frame. Frame lines are cut one cell short of the width so
 * none wraps (a wrapped line would take two rows and the next erase would miss one), and the
 * frame is cut to a height that fits (a frame taller than its terminal scrolls its top into
 * the scrollback: the debris of the old board). After a resize the previous frame's rows are
 * counted at the new width, as terminals that re-flow (xterm, tmux, VTE) lay them out.
 */
export class LiveArea {
  readonly #stream: NodeJS.WriteStream;
  #previous: number[] = [];
  #pending: string[] = [];
  #cursorHidden = false;
  readonly #onExit = (): void => void this.#stream.write(SHOW_CURSOR);

  constructor(stream: NodeJS.WriteStream) {
    this.#stream = stream;
  }

  get columns(): number {
    return this.#stream.columns > 0 ? this.#stream.columns : 80;
  }

  get rows(): number {
    return this.#stream.rows > 0 ? this.#stream.rows : 24;
  }

  /** Lines for above the area: written with the next frame, once, and never redrawn. */
  print(line: string): void {
    this.#pending.push(line);
  }

  /**
   * Rows a frame may take now: two thirds of the terminal. The rest shows the forks that just
   * finished, and is slack for a resize: a terminal that shortens or narrows (re-flowing long
   * lines onto more rows) pushes rows past its top into the scrollback before the board hears
   * of it, where no erase reaches; with the slack, a moderate resize pushes none of the frame.
   */
  get height(): number {
    return Math.max(3, Math.floor((this.rows * 2) / 3));
  }

  /** Write what was printed since the last frame, then `frame` in place of the last one. */
  draw(frame: readonly string[]): void {
    const columns = this.columns;
    const lines = frame.slice(0, this.height).map((l) => fit(l, columns - 1));
    let out = this.#erase(columns);
    if (!this.#cursorHidden) {
      out = HIDE_CURSOR + out;
      this.#cursorHidden = true;
      process.once('exit', this.#onExit);
    }
    for (const line of this.#pending) out += `${line}\n`;
    this.#pending = [];
    out += lines.join('\n');
    this.#previous = lines.map((l) => stringWidth(l));
    this.#stream.write(out);
  }

  /** Erase the area, write what is pending, and give the cursor back: the terminal is the shell's again. */
  close(): void {
    let out = this.#erase(this.columns);
    for (const line of this.#pending) out += `${line}\n`;
    this.#pending = [];
    this.#previous = [];
    if (this.#cursorHidden) {
      out += SHOW_CURSOR;
      this.#cursorHidden = false;
      process.off('exit', this.#onExit);
    }
    this.#stream.write(out);
  }

  #erase(columns: number): string {
    if (this.#previous.length === 0) return '';
    const rows = this.#previous.reduce((n, width) => n + Math.max(1, Math.ceil(width / columns)), 0);
    return `\r${up(rows - 1)}${ERASE_DOWN}`;
  }
}
