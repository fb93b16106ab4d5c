import { randomUUID } from 'node:crypto';
import { ForkcacheError } from '../../core/util/errors.ts';
import type { ForkCallRegistry } from '../proxy/fork-calls.ts';
import { forkInput, type ForkInput } from './fork-input.ts';
import {
  bashAllowed,
  formatFanOut,
  outputSchemaOf,
  runForkCall,
  type ForkCallResult,
  type ForkRunSettings,
} from './fork-run.ts';
import { parseOrThrow } from '../../core/util/validation.ts';

/** How long a tool call waits for the proxy to have read the answer that made it, or to see its id (default 30 s). */
const DEFAULT_CLAIM_WAIT_MS = 30_000;

export interface ToolAnswer {
  text: string;
  isError: boolean;
}

interface BackgroundRun {
  directives: number;
  result?: ForkCallResult;
  error?: Error;
  done: Promise<void>;
}

/**
 * What the `fork` and `fork_status` tools do, whatever transport brings the call: find the
 * call's request among those the proxy captured, fan out from it, and answer with the reports
 * (or, in the background, a run id to ask `fork_status` about).
 */
export class ForkService {
  readonly #calls: ForkCallRegistry;
  readonly #settings: ForkRunSettings;
  readonly #claimWaitMs: number;
  readonly #runs = new Map<string, BackgroundRun>();
  /** Fan-outs in flight (foreground and background), awaited on close. */
  readonly #active = new Set<Promise<unknown>>();
  readonly #stop = new AbortController();

  constructor(calls: ForkCallRegistry, settings: ForkRunSettings, claimWaitMs = DEFAULT_CLAIM_WAIT_MS) {
    this.#calls = calls;
    this.#settings = settings;
    this.#claimWaitMs = claimWaitMs;
  }

  async fork(
    args: unknown,
    toolUseId: string | undefined,
    signal: AbortSignal,
    onProgress?: (message: string) => void,
  ): Promise<ToolAnswer> {
    let input: ForkInput;
    try {
      input = parseOrThrow(forkInput, args, 'TOOL_INPUT_INVALID', 'fork');
      // refused before the call is claimed: the client may call again with what it can have
      bashAllowed(input, this.#settings);
      if (input.outputSchema !== undefined) outputSchemaOf(input.outputSchema);
    } catch (err) {
      return { text: (err as Error).message, isError: true };
    }
    const wait = AbortSignal.any([signal, this.#stop.signal, AbortSignal.timeout(this.#claimWaitMs)]);
    let captured;
    try {
      captured = await this.#calls.claim(args as Record<string, unknown>, toolUseId, wait);
    } catch (err) {
      // unseen, ambiguous (two sessions' calls with these arguments), or the client gave up
      return { text: (err as Error).message, isError: true };
    }
    const run = runForkCall(
      captured,
      input,
      this.#settings,
      input.background ? this.#stop.signal : AbortSignal.any([signal, this.#stop.signal]),
      // a background call has answered already: nobody waits for its progress
      input.background || !onProgress
        ? undefined
        : (p) => onProgress(`${p.ended} of ${p.total} fork(s) ended; ${p.event}`),
    );
    this.#track(run);
    if (input.background) {
      const runId = `run-${randomUUID().slice(0, 8)}`;
      const entry: BackgroundRun = { directives: input.directives.length, done: Promise.resolve() };
      entry.done = run.then(
        (result) => void (entry.result = result),
        (err: unknown) => void (entry.error = err instanceof Error ? err : new ForkcacheError('INTERNAL', String(err))),
      );
      this.#runs.set(runId, entry);
      return {
        text: `forkcache: ${input.directives.length} fork(s) started in the background as ${runId}; call fork_status with {"runId": "${runId}"} for their reports.`,
        isError: false,
      };
    }
    try {
      const result = await run;
      return { text: formatFanOut(result), isError: false };
    } catch (err) {
      return { text: `forkcache: the fan-out failed: ${(err as Error).message}`, isError: true };
    }
  }

  status(args: unknown): ToolAnswer {
    const runId = (args as { runId?: unknown } | undefined)?.runId;
    const run = typeof runId === 'string' ? this.#runs.get(runId) : undefined;
    if (!run) return { text: `fork_status: runId: no background run ${JSON.stringify(runId)}`, isError: true };
    if (run.error) return { text: `forkcache: ${String(runId)} failed: ${run.error.message}`, isError: true };
    if (!run.result)
      return { text: `forkcache: ${String(runId)}: ${run.directives} fork(s) still running`, isError: false };
    return { text: formatFanOut(run.result), isError: false };
  }

  #track(run: Promise<unknown>): void {
    const settled = run.catch(() => undefined);
    this.#active.add(settled);
    void settled.finally(() => this.#active.delete(settled));
  }

  /** Cancel what runs and wait for it (every fan-out writes what it finished before it stops). */
  async close(): Promise<void> {
    this.#stop.abort(new ForkcacheError('FORK_CANCELLED', 'forkcache mcp is closing'));
    await Promise.all(this.#active);
  }
}
