import type { ForkStatus } from '../util/fork-status.ts';
import type { FanOut, FanOutEvent } from './fork-handle.ts';

/** One child as a progress display shows it. */
export interface ForkProgressState {
  forkId: string;
  /** 1-based, as the reports number the children (`## fork 3`). */
  fork: number;
  directive: string;
  status: ForkStatus;
  /** Turns finished so far. */
  turns: number;
  /** The last tool the child called, if any. */
  lastTool?: string;
}

/** Where a fan-out stands after one of its events: what the AI SDK fork tool yields, and MCP progress says. */
export interface FanOutProgress {
  fanoutId: string;
  /** What just happened, in words: `fork 3 started`, `fork 3 called lookup_user`, `fork 3 ended: completed`. */
  event: string;
  /** Children that have ended, of `total`. */
  ended: number;
  total: number;
  forks: ForkProgressState[];
}

/**
 * The fan-out's progress, one value per event a display shows: a child starting, calling a
 * tool, finishing a turn, ending. The children's states are built from the events themselves
 * (not read from the live handles), so each value says exactly what had happened by then.
 * The iteration ends with the fan-out's events; `fan.settled()` has the results.
 */
export async function* progressOf(fan: FanOut): AsyncGenerator<FanOutProgress> {
  const forks: ForkProgressState[] = fan.forks.map((f) => ({
    forkId: f.forkId,
    fork: f.index + 1,
    directive: f.directive,
    status: 'queued',
    turns: 0,
  }));
  const byId = new Map(forks.map((f) => [f.forkId, f]));
  let ended = 0;
  for await (const event of fan.events) {
    const fork = 'forkId' in event ? byId.get(event.forkId) : undefined;
    if (!fork) continue;
    const words = apply(fork, event);
    if (words === undefined) continue;
    if (event.type === 'fork-end') ended++;
    yield {
      fanoutId: fan.id,
      event: `fork ${fork.fork} ${words}`,
      ended,
      total: forks.length,
      forks: forks.map((f) => ({ ...f })),
    };
  }
}

/** Move one child's state on by an event; the words for it, or undefined for an event no display shows. */
function apply(fork: ForkProgressState, event: FanOutEvent): string | undefined {
  switch (event.type) {
    case 'fork-start':
      fork.status = 'running';
      return 'started';
    case 'tool-call':
      fork.lastTool = event.name;
      return `called ${event.name}${event.isError ? ' (error)' : ''}`;
    case 'turn-end':
      fork.turns = event.turn;
      return `finished turn ${event.turn}`;
    case 'fork-end':
      fork.status = event.status;
      return `ended: ${event.status}`;
    default:
      return undefined;
  }
}
