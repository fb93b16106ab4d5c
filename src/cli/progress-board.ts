import cliProgress from 'cli-progress';
import type { FanOutEvent } from '../agent/fork-handle.ts';
import { costUsd } from '../ledger/cost.ts';
import type { ModelCatalogue } from '../models/catalogue.ts';
import type { AdmissionView } from '../gate/admission/scheduler.ts';
import { formatBudget } from './budget-line.ts';
import { addUsage, totalInputTokens, type Usage, ZERO_USAGE } from '../ledger/usage.ts';

interface Row {
  status: string;
  turn: number;
  tool: string;
  usage: Usage;
  /** Priced turn by turn (each turn has its own band and date); null once a turn is unpriced. */
  cost: number | null;
  bar?: cliProgress.SingleBar;
}

export interface BoardOptions {
  model: string;
  /** Prices (default the built-in catalogue). */
  catalogue?: ModelCatalogue | undefined;
  stream?: NodeJS.WriteStream;
  /** Force plain lines (not a TTY, or `--json`). */
  plain?: boolean;
  /** Where NO_COLOR is read (default `process.env`). */
  env?: Readonly<Record<string, string | undefined>>;
  /** The engine's rate-limit budget (`engine.admission`): shown under the totals. */
  budget?: (() => AdmissionView) | undefined;
}

// SGR colours for the status word; https://no-color.org: a non-empty NO_COLOR turns them off.
const STATUS_COLORS: Record<string, number> = { running: 36, completed: 32, failed: 31, cancelled: 33 };

/** Colour on a TTY unless NO_COLOR is set (to anything but the empty string). */
export function colorEnabled(
  stream: { isTTY?: boolean },
  env: Readonly<Record<string, string | undefined>> = process.env,
): boolean {
  return stream.isTTY === true && !env['NO_COLOR'];
}

const fmt = (n: number): string => n.toLocaleString('en-US');
const pct = (u: Usage): string => {
  const total = totalInputTokens(u);
  return total === 0 ? '  -' : `${Math.round((100 * u.cache_read_input_tokens) / total)}%`.padStart(4);
};

/**
 * Live per-fork progress: on a TTY one redrawn line per fork (status, turn, last tool,
 * tokens, cache hit %) and a totals line with the cost so far, the status coloured unless
 * NO_COLOR is set; elsewhere (or with `--json`), plain uncoloured lines as forks start and end.
 */
export class ProgressBoard {
  readonly #rows = new Map<string, Row>();
  readonly #model: string;
  readonly #catalogue: ModelCatalogue | undefined;
  readonly #stream: NodeJS.WriteStream;
  readonly #multi: cliProgress.MultiBar | undefined;
  readonly #totals: cliProgress.SingleBar | undefined;
  readonly #color: boolean;
  readonly #budget: (() => AdmissionView) | undefined;
  readonly #budgetBar: cliProgress.SingleBar | undefined;

  constructor(options: BoardOptions) {
    this.#model = options.model;
    this.#catalogue = options.catalogue;
    this.#stream = options.stream ?? process.stderr;
    this.#color = !options.plain && colorEnabled(this.#stream, options.env);
    if (!options.plain && this.#stream.isTTY) {
      this.#multi = new cliProgress.MultiBar(
        { stream: this.#stream, format: ' {line}', hideCursor: true, clearOnComplete: false, fps: 10, barsize: 0 },
        cliProgress.Presets.legacy,
      );
      this.#totals = this.#multi.create(1, 0, { line: 'starting' });
      if (options.budget) this.#budgetBar = this.#multi.create(1, 0, { line: '' });
    }
    this.#budget = options.budget;
  }

  onEvent(event: FanOutEvent): void {
    const row = this.#row(event.forkId);
    switch (event.type) {
      case 'fork-start':
        row.status = 'running';
        this.#plain(`${event.forkId} started`);
        break;
      case 'turn-start':
        row.turn = event.turn;
        break;
      case 'turn-end': {
        row.usage = addUsage(row.usage, event.request.usage);
        const turnCost = costUsd(event.request.usage, this.#model, {
          at: event.request.sentAt,
          ...(this.#catalogue ? { catalogue: this.#catalogue } : {}),
        })?.total;
        row.cost = row.cost === null || turnCost === undefined ? null : row.cost + turnCost;
        break;
      }
      case 'tool-call':
        row.tool = event.name + (event.isError ? '!' : '');
        break;
      case 'fork-end':
        row.status = event.status;
        this.#plain(
          `${event.forkId} ${event.status} after ${event.result.turns} turns, ${event.result.toolCalls} tool calls, cache hit ${pct(row.usage).trim()}`,
        );
        if (
          event.result.error?.code === 'RATE_LIMIT_SPEND_CAP' ||
          (this.#budget?.().classes.some((c) => c.limits.rpm !== undefined) ?? false)
        ) {
          for (const line of formatBudget(this.#budget!())) this.#plain(line);
        }
        break;
      default:
        break;
    }
    this.#render(event.forkId, row);
  }

  stop(): void {
    this.#multi?.stop();
  }

  #row(forkId: string): Row {
    let row = this.#rows.get(forkId);
    if (!row) {
      row = { status: 'queued', turn: 0, tool: '-', usage: ZERO_USAGE, cost: 0 };
      if (this.#multi) row.bar = this.#multi.create(1, 0, { line: '' });
      this.#rows.set(forkId, row);
    }
    return row;
  }

  #render(forkId: string, row: Row): void {
    if (!this.#multi) return;
    const tokens = totalInputTokens(row.usage) + row.usage.output_tokens;
    row.bar?.update(0, {
      line: `${forkId.padEnd(20)} ${this.#paint(row.status.padEnd(9), row.status)} turn ${String(row.turn).padStart(3)}  ${row.tool.padEnd(11)} ${fmt(tokens).padStart(9)} tok  hit ${pct(row.usage)}`,
    });
    let total: Usage = ZERO_USAGE;
    let done = 0;
    let cost: number | null = 0;
    for (const r of this.#rows.values()) {
      total = addUsage(total, r.usage);
      cost = cost === null || r.cost === null ? null : cost + r.cost;
      if (r.status !== 'queued' && r.status !== 'running') done += 1;
    }
    if (this.#budget) this.#budgetBar?.update(0, { line: formatBudget(this.#budget()).join(' | ') });
    this.#totals?.update(0, {
      line: `${done}/${this.#rows.size} forks done   read ${fmt(total.cache_read_input_tokens)}  written ${fmt(total.cache_creation_input_tokens)}  uncached ${fmt(total.input_tokens)}  hit ${pct(total)}  cost ${cost === null ? 'unpriced' : `$${cost.toFixed(4)}`}`,
    });
  }

  #paint(text: string, status: string): string {
    const code = STATUS_COLORS[status];
    return this.#color && code ? `\x1b[${code}m${text}\x1b[39m` : text;
  }

  #plain(line: string): void {
    if (!this.#multi) this.#stream.write(`${line}\n`);
  }
}
