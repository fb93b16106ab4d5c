import type { ForkReport } from '../../core/fork/report.ts';
import type { Usage } from '../../core/ledger/usage.ts';
import type { FanOutFiles } from './run-files.ts';

/**
 * Where a fork is, over time. `warming` is the wait before its first request is sent
 * (turn-start → sent: the warm-first gate, and the API concurrency limit); `request` is a
 * model call, for later turns including their API queue; `running` is the rest of the fork's
 * life in a worker (tools, thread pickup).
 */
export type Phase = 'queued' | 'warming' | 'running' | 'request' | 'done';
/** In reading order (the legend's). */
export const PHASES: readonly Phase[] = ['queued', 'warming', 'running', 'request', 'done'];

export interface Segment {
  /** Row label: the fork's short id (`f03`) or `warm-up`. */
  row: string;
  phase: Phase;
  /** Milliseconds since the fan-out started. */
  start: number;
  end: number;
}

export interface RequestPoint {
  label: string;
  forkId: string | undefined;
  kind: 'warmup' | 'fork';
  turn: number;
  sentAt: number;
  usage: Usage;
  /** USD, when the model is in the table. */
  cost: number | undefined;
  noCache: number | undefined;
}

export interface ForkRow {
  forkId: string;
  short: string;
  directive: string;
  status: string;
  turns: number;
  toolCalls: number;
  filesChanged: string[];
  /** Times its worker died and the fork went on in a new one. */
  restarts: number;
  report: ForkReport | undefined;
  error: { code: string; message: string } | undefined;
}

export interface RunModel {
  files: FanOutFiles;
  id: string;
  rows: string[];
  segments: Segment[];
  requests: RequestPoint[];
  forks: ForkRow[];
  durationMs: number;
  diagnostics: string[];
}
