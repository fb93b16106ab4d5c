import type { WriteStream } from 'node:fs';
import type { FanOutEvent } from '../../agent/fork-handle.ts';
import { openEventLog } from '../../run-dir/writers.ts';

/** The run's event log (`events.jsonl`): what reports draw timelines from. None without a run directory. */
export class FanOutLog {
  readonly #stream: WriteStream | undefined;

  constructor(runDir: string | undefined) {
    this.#stream = runDir ? openEventLog(runDir) : undefined;
  }

  get open(): boolean {
    return this.#stream !== undefined;
  }

  line(record: Record<string, unknown>): void {
    this.#stream?.write(`${JSON.stringify(record)}\n`);
  }

  /** A fork's end is logged without its result: the transcript and the summary hold that. */
  event(event: FanOutEvent): void {
    if (!this.#stream) return;
    if (event.type === 'fork-end') {
      const { result } = event;
      this.line({
        type: 'fork-end',
        forkId: event.forkId,
        at: event.at,
        status: event.status,
        turns: result.turns,
        toolCalls: result.toolCalls,
        filesChanged: result.filesChanged,
        error: result.error ?? null,
      });
    } else this.line(event);
  }

  close(): Promise<void> {
    return new Promise<void>((resolve) => (this.#stream ? this.#stream.end(resolve) : resolve()));
  }
}
