import type { FanOutEvent, ForkHandle } from '../../core/agent/fork-handle.ts';
import { costUsd } from '../../core/ledger/cost.ts';
import { addUsage, totalInputTokens, type Usage, ZERO_USAGE } from '../../core/ledger/usage.ts';
import type { ModelCatalogue } from '../../core/models/catalogue.ts';
import { reportSaysNotDone } from '../../core/fork/report-outcome.ts';
import { terminalSafe } from '../../core/util/terminal-text.ts';

/** One fork as the board knows it. `status` is the handle's, or any terminal status a fork ends with. */
export interface ForkRow {
  id: string;
  /** What the fork works on: the file its directive names, else the directive's first line. */
  label: string;
  status: string;
  turn: number;
  tool: string;
  usage: Usage;
  /** Usage of the fork's first request of this pass: what the fan-out hit ratio counts. */
  first: Usage | undefined;
  /** Priced turn by turn (each turn has its own band and date); null once a turn is unpriced. */
  cost: number | null;
  toolCalls: number;
  error: string | undefined;
}

const QUEUED = 'queued';
/** Shown for a fork that ended `completed` with a report that says `Result: not done`. */
const NOT_DONE_REPORTED = 'not done';
const RUNNING = 'running';
const isLive = (status: string): boolean => status === QUEUED || status === RUNNING;

// a path with a folder or an extension: `src/a.ts`, `README.md`
const PATH = /(?:^|\s)((?:[\w.@-]+\/)+[\w.@-]+|[\w@-]+\.[A-Za-z]\w{0,5})(?=$|[\s,;:)])/g;

/** The file a directive is about (its last path-like word), else its first line. */
export function labelOf(directive: string): string {
  const paths = [...directive.matchAll(PATH)].map((m) => m[1]!);
  return paths.at(-1) ?? directive.split('\n')[0]!.trim();
}

/** The words two or more directives on one file do not share: what tells their forks apart. */
function differingWords(lines: readonly string[]): string[] {
  const words = lines.map((l) => l.split(/\s+/));
  let head = 0;
  while (words.every((w) => w[head] !== undefined && w[head] === words[0]![head])) head++;
  let tail = 0;
  const shortest = Math.min(...words.map((w) => w.length));
  while (
    tail < shortest - head &&
    words.every((w) => w[w.length - 1 - tail] === words[0]![words[0]!.length - 1 - tail])
  )
    tail++;
  return words.map((w) => w.slice(head, w.length - tail).join(' '));
}

const MAX_DIFFERING = 40;

/**
 * What tells each directive apart: the file it names, and where two or more directives name
 * that file (two renames of one file), the words they do not share (`isFunction to isFn`).
 */
export function directiveParts(directives: readonly string[]): { file: string; differs: string | undefined }[] {
  const parts = directives.map((d) => ({ file: labelOf(d), differs: undefined as string | undefined }));
  const byFile = new Map<string, number[]>();
  parts.forEach((p, i) => byFile.set(p.file, [...(byFile.get(p.file) ?? []), i]));
  for (const group of byFile.values()) {
    if (group.length < 2) continue;
    const lines = group.map((i) => directives[i]!.split('\n')[0]!.trim());
    differingWords(lines).forEach((words, j) => {
      if (words !== '') parts[group[j]!]!.differs = words;
    });
  }
  return parts;
}

/** Each fork's label on the board: the file, and in brackets what tells directives on one file apart. */
function directiveLabels(directives: readonly string[]): string[] {
  return directiveParts(directives).map(({ file, differs }) =>
    differs === undefined
      ? file
      : `${file} (${differs.length > MAX_DIFFERING ? `${differs.slice(0, MAX_DIFFERING - 1)}…` : differs})`,
  );
}

/**
 * What the live board shows, fed the fan-out's events: every fork from the plan on (so the
 * total is known before the first one starts), the counts by status, the usage and cost so
 * far, the two hit ratios, and the timing an ETA is drawn from. Pure: the clock is the events'.
 */
export class BoardState {
  readonly rows = new Map<string, ForkRow>();
  readonly #model: string;
  readonly #catalogue: ModelCatalogue | undefined;
  /** When the first fork started and how many have ended since (the ETA's rate). */
  #firstStart: number | undefined;
  #endedHere = 0;

  constructor(model: string, catalogue?: ModelCatalogue) {
    this.#model = model;
    this.#catalogue = catalogue;
  }

  /** Every fork of a fan-out, from its handles: the plan, before any fork has sent anything. */
  plan(forks: readonly Pick<ForkHandle, 'forkId' | 'directive'>[]): void {
    const labels = directiveLabels(forks.map((f) => f.directive));
    forks.forEach((fork, i) => (this.#row(fork.forkId).label = terminalSafe(labels[i]!)));
  }

  onEvent(event: FanOutEvent): ForkRow {
    const row = this.#row(event.forkId);
    switch (event.type) {
      case 'fork-start':
        row.status = RUNNING;
        this.#firstStart ??= event.at;
        break;
      case 'turn-start':
        row.turn = event.turn;
        break;
      case 'turn-end':
        this.#addTurn(row, event.request);
        row.first ??= event.request.usage;
        break;
      case 'tool-call':
        // the tool name, the error and the label are the model's or the plan's text: escaped here, once
        row.tool = terminalSafe(event.name) + (event.isError ? '!' : '');
        row.toolCalls += 1;
        break;
      case 'fork-end':
        // a fork finished in an earlier pass ends here too, without having started: not in the rate
        if (row.status === RUNNING) this.#endedHere += 1;
        // a fork whose own report says "not done" did not do its directive, whatever its status
        row.status =
          event.status === 'completed' && reportSaysNotDone(event.result.report) ? NOT_DONE_REPORTED : event.status;
        row.turn = event.result.turns;
        row.toolCalls = event.result.toolCalls;
        // the fork's whole usage, every pass's turns: a fork finished in an earlier pass
        // sent nothing in this one, and a resumed one only its later turns
        if ((event.result.requests ?? []).length > 0) {
          row.usage = ZERO_USAGE;
          row.cost = 0;
          for (const request of event.result.requests) this.#addTurn(row, request);
        }
        row.error = event.result.error
          ? terminalSafe(`${event.result.error.code}: ${event.result.error.message}`)
          : undefined;
        break;
      default:
        break;
    }
    return row;
  }

  get total(): number {
    return this.rows.size;
  }

  /** Forks by what the board shows: queued, running, done (`completed`), not done (any other end). */
  counts(): { queued: number; running: number; done: number; notDone: number } {
    const c = { queued: 0, running: 0, done: 0, notDone: 0 };
    for (const r of this.rows.values()) {
      if (r.status === QUEUED) c.queued += 1;
      else if (r.status === RUNNING) c.running += 1;
      else if (r.status === 'completed' || r.status === 'no_change') c.done += 1;
      else c.notDone += 1;
    }
    return c;
  }

  running(): ForkRow[] {
    return [...this.rows.values()].filter((r) => r.status === RUNNING);
  }

  /** Usage and cost over every fork, and the hit ratios named as the summary names them. */
  totals(): { usage: Usage; cost: number | null; fanoutHit: number | null; allHit: number | null } {
    let usage: Usage = ZERO_USAGE;
    let first: Usage = ZERO_USAGE;
    let cost: number | null = 0;
    for (const r of this.rows.values()) {
      usage = addUsage(usage, r.usage);
      if (r.first) first = addUsage(first, r.first);
      cost = cost === null || r.cost === null ? null : cost + r.cost;
    }
    return { usage, cost, fanoutHit: hitRatio(first), allHit: hitRatio(usage) };
  }

  /**
   * Milliseconds left at the rate forks have ended so far in this pass; undefined until
   * one has ended. A rate over the whole pass: steadier than one over the last few forks.
   */
  etaMs(now: number): number | undefined {
    const { queued, running } = this.counts();
    if (this.#firstStart === undefined || this.#endedHere === 0) return undefined;
    const perFork = (now - this.#firstStart) / this.#endedHere;
    return Math.max(0, Math.round(perFork * (queued + running)));
  }

  /** Whether every fork has ended. */
  get finished(): boolean {
    return this.rows.size > 0 && [...this.rows.values()].every((r) => !isLive(r.status));
  }

  /** A turn's usage and price added to its fork's row (each turn priced at its own date and band). */
  #addTurn(row: ForkRow, request: { usage: Usage; sentAt: number }): void {
    row.usage = addUsage(row.usage, request.usage);
    const turnCost = costUsd(request.usage, this.#model, {
      at: request.sentAt,
      ...(this.#catalogue ? { catalogue: this.#catalogue } : {}),
    })?.total;
    row.cost = row.cost === null || turnCost === undefined ? null : row.cost + turnCost;
  }

  #row(forkId: string, directive?: string): ForkRow {
    let row = this.rows.get(forkId);
    if (!row) {
      row = {
        id: forkId,
        label: directive === undefined ? '' : terminalSafe(labelOf(directive)),
        status: QUEUED,
        turn: 0,
        tool: '-',
        usage: ZERO_USAGE,
        first: undefined,
        cost: 0,
        toolCalls: 0,
        error: undefined,
      };
      this.rows.set(forkId, row);
    }
    return row;
  }
}

/** Cache reads over all input tokens (read + written + uncached); null with no input yet. */
export function hitRatio(usage: Usage): number | null {
  const total = totalInputTokens(usage);
  return total === 0 ? null : usage.cache_read_input_tokens / total;
}
