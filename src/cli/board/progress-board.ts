import type { FanOutEvent, ForkHandle } from '../../core/agent/fork-handle.ts';
import type { ModelCatalogue } from '../../core/models/catalogue.ts';
import type { AdmissionView } from '../../core/gate/admission/scheduler.ts';
import { formatBudget } from '../output/budget-line.ts';
import { BoardState, hitRatio, type ForkRow } from './board-state.ts';
import { cacheLine, clockTime, finishedLine, footerLine, type Paint, progressLine, runningRow } from './board-lines.ts';
import { LiveArea } from './live-area.ts';
import { terminalSafe, terminalSafeLines } from '../../core/util/terminal-text.ts';

interface BoardOptions {
  model: string;
  /** Prices (default the built-in catalogue). */
  catalogue?: ModelCatalogue | undefined;
  stream?: NodeJS.WriteStream;
  /** Force plain lines (not a TTY, or `--json`). */
  plain?: boolean;
  /** Where NO_COLOR is read (default `process.env`). */
  env?: Readonly<Record<string, string | undefined>>;
  /** The engine's rate-limit budget (`engine.admission`): shown once the API has told its limits. */
  budget?: (() => AdmissionView) | undefined;
  /** Elapsed time and the ETA (default `Date.now`): the events' `at` are on the same clock. */
  now?: () => number;
  /** Redraw at most this often, and at least this often for the clocks (default 100 ms / 1 s); 0: only on `redraw()`. */
  frameMs?: number;
  tickMs?: number;
}

// SGR colours for the status word; https://no-color.org: a non-empty NO_COLOR turns them off.
const STATUS_COLORS: Record<string, number> = { running: 36, completed: 32, failed: 31, cancelled: 33 };
/** Any status that is not `completed` and has ended is "not done": red unless it has its own colour. */
const NOT_DONE_COLOR = 31;

/** Colour on a TTY unless NO_COLOR is set (to anything but the empty string). */
export function colorEnabled(
  stream: { isTTY?: boolean },
  env: Readonly<Record<string, string | undefined>> = process.env,
): boolean {
  return stream.isTTY === true && !env['NO_COLOR'];
}

const pctOf = (row: ForkRow): string => {
  const ratio = hitRatio(row.usage);
  return ratio === null ? '-' : `${Math.round(100 * ratio)}%`;
};

/**
 * Live progress of a fan-out at any size. On a TTY: a live area of fixed height at the bottom
 * (a parent-status line while a parent agent works, the counts with elapsed time and ETA, the
 * cache and cost so far, the rate-limit budget once limits are known, as many running forks
 * as fit, then what is not shown), and each finished fork printed once above it, scrolling
 * as ordinary output. Elsewhere (or with `--json`): plain uncoloured lines as forks start and
 * end, and a progress line every tenth of the run.
 */
export class ProgressBoard {
  readonly #state: BoardState;
  readonly #stream: NodeJS.WriteStream;
  readonly #area: LiveArea | undefined;
  readonly #color: boolean;
  readonly #budget: (() => AdmissionView) | undefined;
  readonly #now: () => number;
  readonly #startedAt: number;
  readonly #frameMs: number;
  #frame: NodeJS.Timeout | undefined;
  readonly #tick: NodeJS.Timeout | undefined;
  #parent: { text: string; since: number } | undefined;
  #fanouts: string[] = [];
  #reportedTenth = 0;
  readonly #onResize = (): void => this.redraw();
  readonly #paint: Paint = { status: (text, status) => this.#paintStatus(text, status) };

  constructor(options: BoardOptions) {
    this.#state = new BoardState(options.model, options.catalogue);
    this.#stream = options.stream ?? process.stderr;
    this.#now = options.now ?? Date.now;
    this.#startedAt = this.#now();
    this.#color = !options.plain && colorEnabled(this.#stream, options.env);
    this.#budget = options.budget;
    this.#frameMs = options.frameMs ?? 100;
    if (!options.plain && this.#stream.isTTY) {
      this.#area = new LiveArea(this.#stream);
      this.#stream.on('resize', this.#onResize);
      const tickMs = options.tickMs ?? 1000;
      if (tickMs > 0) {
        this.#tick = setInterval(() => this.redraw(), tickMs);
        this.#tick.unref();
      }
    }
  }

  /** The forks of a fan-out, as planned: the board counts them all from the first frame. */
  plan(fan: { id: string; forks: readonly Pick<ForkHandle, 'forkId' | 'directive'>[] }): void {
    this.#fanouts.push(fan.id);
    this.#state.plan(fan.forks);
    this.#schedule();
  }

  /** What the parent agent is doing (undefined: nothing now); shown with the time it has taken. */
  parent(text: string | undefined): void {
    this.#parent = text === undefined ? undefined : { text: terminalSafe(text), since: this.#now() };
    if (text !== undefined) this.#plain(`parent: ${text}`);
    this.#schedule();
  }

  /** A line of the run's own (Ctrl-C, a note): above the live area on a TTY, so it stays visible. */
  log(text: string): void {
    if (this.#area) {
      for (const line of text.split('\n')) this.#area.print(terminalSafe(line));
      this.#schedule();
    } else this.#stream.write(`${terminalSafeLines(text)}\n`);
  }

  onEvent(event: FanOutEvent): void {
    const row = this.#state.onEvent(event);
    if (event.type === 'fork-start') this.#plain(`${event.forkId} started`);
    if (event.type === 'fork-end') this.#ended(row, event.result.error?.code === 'RATE_LIMIT_SPEND_CAP');
    this.#schedule();
  }

  /** Draw a frame now (what the timers do). */
  redraw(): void {
    if (this.#frame) clearTimeout(this.#frame);
    this.#frame = undefined;
    this.#area?.draw(this.#lines());
  }

  /** The board is over: the live area is erased, what was printed above stays. */
  stop(): void {
    if (this.#frame) clearTimeout(this.#frame);
    this.#frame = undefined;
    if (this.#tick) clearInterval(this.#tick);
    this.#stream.off?.('resize', this.#onResize);
    this.#area?.close();
  }

  #ended(row: ForkRow, spendCap: boolean): void {
    // cancelled forks come by the hundred after Ctrl-C: the summary counts and groups them
    if (row.status === 'cancelled') {
      if (!this.#area) this.#progressEveryTenth();
      return;
    }
    if (this.#area) this.#area.print(finishedLine(row, this.#paint));
    this.#plain(
      `${row.id} ${row.status} after ${row.turn} turns, ${row.toolCalls} tool calls, cache hit ${pctOf(row)}${row.label ? `  ${row.label}` : ''}`,
    );
    if (!this.#area) this.#progressEveryTenth();
    const view = this.#budget?.();
    if (view && (spendCap || limitsKnown(view))) for (const line of formatBudget(view)) this.#plain(line);
  }

  #progressEveryTenth(): void {
    const { done, notDone } = this.#state.counts();
    const tenth = Math.floor((10 * (done + notDone)) / Math.max(1, this.#state.total));
    if (tenth <= this.#reportedTenth || this.#state.total < 20) return;
    this.#reportedTenth = tenth;
    const now = this.#now();
    this.#plain(`progress: ${progressLine(this.#state, now - this.#startedAt, this.#state.etaMs(now))}`);
  }

  #lines(): string[] {
    const now = this.#now();
    const lines: string[] = [];
    if (this.#parent) lines.push(`parent   ${this.#parent.text} (${clockTime(now - this.#parent.since)})`);
    if (this.#state.total === 0) {
      if (!this.#parent) lines.push(`starting (elapsed ${clockTime(now - this.#startedAt)})`);
      return lines;
    }
    const fanouts = this.#fanouts.length === 1 ? this.#fanouts[0]! : `${this.#fanouts.length} fan-outs`;
    lines.push(`${fanouts}  ${progressLine(this.#state, now - this.#startedAt, this.#state.etaMs(now))}`);
    lines.push(`cache    ${cacheLine(this.#state)}`);
    const view = this.#budget?.();
    if (view && limitsKnown(view)) lines.push(...formatBudget(view));
    const running = this.#state.running();
    const room = Math.max(0, this.#area!.height - lines.length - 1);
    const shown = running.length <= room ? running : running.slice(0, room);
    for (const row of shown) lines.push(runningRow(row, this.#area!.columns));
    lines.push(footerLine(this.#state, running.length - shown.length));
    return lines;
  }

  #schedule(): void {
    if (!this.#area || this.#frame || this.#frameMs === 0) return;
    this.#frame = setTimeout(() => this.redraw(), this.#frameMs);
    this.#frame.unref();
  }

  #paintStatus(text: string, status: string): string {
    const code = STATUS_COLORS[status] ?? (status === 'queued' ? undefined : NOT_DONE_COLOR);
    return this.#color && code ? `\x1b[${code}m${text}\x1b[39m` : text;
  }

  /** A plain line (no colour): escaped whole, as the model's text in it may not act on the terminal. */
  #plain(line: string): void {
    if (!this.#area) this.#stream.write(`${terminalSafe(line)}\n`);
  }
}

/** The budget means something only once the API has said its limits (not `RPM 0/?` on the emulator). */
function limitsKnown(view: AdmissionView): boolean {
  return (
    view.stopped !== undefined ||
    view.classes.some((c) => c.limits.rpm !== undefined || c.limits.itpm !== undefined || c.limits.otpm !== undefined)
  );
}
