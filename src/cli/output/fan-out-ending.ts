import type { FanOut, FanOutResult } from '../../core/agent/fork-handle.ts';
import { resumeCommand } from './resume-hint.ts';

/**
 * The fan-out's result; when it cannot be had (its summary failed after the forks finished),
 * what is known is still printed first — each fork's status and directive, and the way on —
 * before the error ends the command (exit 1). A run that did its work must not end with one
 * line, or not at all.
 */
export async function settledOrForks(
  fan: FanOut,
  runDir: string | undefined,
  log: (line: string) => void,
): Promise<FanOutResult> {
  try {
    return await fan.settled();
  } catch (err) {
    log(`the fan-out's summary could not be made: ${(err as Error).message}`);
    for (const fork of fan.forks) log(`  ${fork.forkId}  ${fork.status}  ${fork.directive.slice(0, 100)}`);
    if (runDir) log(`transcripts are kept; continue with: ${resumeCommand(runDir)}`);
    throw err;
  }
}

/** Close the engine, and the endpoint even when closing the engine fails (an open server keeps the process alive). */
export async function closeAll(engine: { close(): Promise<void> }, target: { close(): Promise<void> }): Promise<void> {
  try {
    await engine.close();
  } finally {
    await target.close();
  }
}
