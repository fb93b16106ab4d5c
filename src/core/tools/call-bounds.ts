import { capResult } from './host-tools.ts';
import type { ToolLimits } from './limits.ts';

/*
 * The gate's size bounds on what goes into a tool call and what comes out of it, whatever the
 * tool: each tool keeps its own finer limits (read_file's maxReadBytes, bash's output cap), and
 * these hold for the ones that have none, for host tools and for a tool added later.
 */

/**
 * The largest input a call may carry (its JSON). A model writes at most `max_tokens` of output
 * (well under this); a larger input is a hostile or broken transport, refused before a tool sees it.
 */
export const MAX_TOOL_INPUT_BYTES = 8 * 1024 * 1024;

/** The largest result of one call: room for the biggest read (line numbers added) or both of bash's streams. */
export function maxCallResultBytes(limits: Readonly<ToolLimits>): number {
  return 2 * Math.max(limits.maxReadBytes, 2 * limits.maxBashOutputBytes) + 4096;
}

/** The largest sum of one turn's results: a turn of many calls cannot build a request past this. */
function maxTurnResultBytes(limits: Readonly<ToolLimits>): number {
  return 2 * maxCallResultBytes(limits);
}

/** The input's size as sent (JSON), or undefined when it is within `max`. */
export function oversizeInput(input: unknown, max: number): number | undefined {
  let bytes: number;
  try {
    bytes = Buffer.byteLength(JSON.stringify(input) ?? '');
  } catch {
    return Number.POSITIVE_INFINITY; // a cycle or a BigInt: no model wrote it
  }
  return bytes > max ? bytes : undefined;
}

/** The results of one fork's turns: each call's result is cut to what its turn has left. */
export class TurnBudget {
  #turn: number | undefined;
  #used = 0;
  readonly #perCall: number;
  readonly #perTurn: number;

  constructor(limits: Readonly<ToolLimits>) {
    this.#perCall = maxCallResultBytes(limits);
    this.#perTurn = maxTurnResultBytes(limits);
  }

  /** `content` cut to the call's bound and to what remains of turn `turn` (a call without a turn is its own). */
  take(content: string, turn: number | undefined): string {
    if (turn === undefined || turn !== this.#turn) {
      this.#turn = turn;
      this.#used = 0;
    }
    const left = Math.max(0, this.#perTurn - this.#used);
    const max = Math.min(this.#perCall, left);
    const out =
      max === 0 && content !== ''
        ? `[not shown: this turn's tool results already reached ${this.#perTurn} bytes; make fewer or narrower calls]`
        : capResult(content, max);
    this.#used += Buffer.byteLength(out);
    return out;
  }
}
