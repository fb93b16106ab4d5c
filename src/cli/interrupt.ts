import type { FanOut } from '../engine/fan-out-types.ts';

/** Exit code of a run stopped by Ctrl-C (128 + SIGINT), as shells report it. */
export const INTERRUPTED_EXIT_CODE = 130;

/**
 * Ctrl-C during a run is graceful: the first SIGINT cancels every running fork (their turns
 * stop, transcripts are flushed with a `cancelled` end, the summary is still printed); a
 * second one quits at once. `interrupted` tells the caller to exit with 130.
 */
export function cancelOnInterrupt(log: (line: string) => void): { watch(fan: FanOut): void; readonly interrupted: boolean; dispose(): void } {
  const fans: FanOut[] = [];
  let interrupted = false;
  const onSignal = (): void => {
    if (interrupted) process.exit(INTERRUPTED_EXIT_CODE);
    interrupted = true;
    log('interrupted: cancelling the running forks (Ctrl-C again to quit at once)');
    for (const fan of fans) fan.cancel();
  };
  process.on('SIGINT', onSignal);
  return {
    watch(fan) {
      fans.push(fan);
      if (interrupted) fan.cancel();
    },
    get interrupted() {
      return interrupted;
    },
    dispose() {
      process.off('SIGINT', onSignal);
    },
  };
}
