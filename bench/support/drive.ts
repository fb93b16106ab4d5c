import type { ManualClock } from '../../src/core/util/clock.ts';
import type { Emulator } from '../../src/integrations/emulator/start.ts';
import type { FanOut, FanOutResult } from '../../src/core/agent/fork-handle.ts';
import type { WarmStrategy } from '../../src/core/settings/engine-settings.ts';

export interface DrivenResult extends FanOutResult {
  /** Emulated time from `fanOut()` to the last fork's end (ms on the ManualClock). */
  makespanMs: number;
  /** Clock steps taken because nothing moved for `stallMs` of wall time (0 in a sound run). */
  forcedSteps: number;
}

export interface DriveOptions {
  /** Forks of the fan-out (all dispatched at once: the engine's slots must be ≥ this). */
  forks: number;
  /** The engine's warm strategy: with `first-child` and `prewarm` siblings wait for the first response to begin. */
  warm: WarmStrategy;
  /** Wall-clock ms without progress after which the clock is stepped anyway (a safety net). */
  stallMs?: number;
  /**
   * The engine's permit requests not granted yet and, of those, the ones sleeping on the clock
   * (`engine.admission`): with it, a request held by the gate for any reason (warm-first,
   * concurrency, rate-limit budget, a backoff) counts as parked, so a fan-out that waits on
   * its budget is driven as exactly as one that waits on the emulator.
   */
  gate?: () => { waiting: number; sleepers: number };
  /** Forks run at once (the engine's fork slots; default: all). */
  slots?: number;
}

type ForkPhase = 'working' | 'requesting' | 'done';

/**
 * Run a fan-out on emulated time. Like test/core/engine/helpers.ts `driveClock`, time jumps to the
 * next sleeper's deadline, but only once the system is quiescent, so that the emulated
 * timeline does not depend on how fast threads run:
 *
 * - every fork has started (or none yet, while a `prewarm` request is out), and none is
 *   between two requests (running tools, building a body);
 * - every fork that is sending a request has it parked in the emulator (waiting out its time
 *   to first token or its output pacing), or is held by the warm-first gate — which, while
 *   the first request's response has not begun, means exactly one request is parked;
 * - every clock sleeper is such a parked request.
 *
 * Requests in transit (worker → main → emulator, or the gate's grant on its way) keep time
 * still, so a request sent at emulated time t arrives at t, whatever the wall clock did.
 */
export async function driveFanOut(
  clock: ManualClock,
  emulator: Emulator,
  start: () => FanOut,
  options: DriveOptions,
): Promise<DrivenResult> {
  const parked = new Set<string>();
  let firstResponseBegun = false;
  const off = [
    emulator.on('request-start', (e) => parked.add(e.requestId)),
    emulator.on('response-start', () => (firstResponseBegun = true)),
    emulator.on('request-end', (e) => parked.delete(e.requestId)),
  ];
  const phase = new Map<string, ForkPhase>();
  const t0 = clock.now();
  let forcedSteps = 0;
  try {
    const fan = start();
    const listen = (async () => {
      for await (const event of fan) {
        if (event.type === 'turn-start') phase.set(event.forkId, 'requesting');
        else if (event.type === 'fork-start' || event.type === 'turn-end' || event.type === 'fork-restart')
          phase.set(event.forkId, 'working');
        else if (event.type === 'fork-end') phase.set(event.forkId, 'done');
      }
    })();
    let finished = false;
    const settled = fan.settled().finally(() => (finished = true));
    let lastChange = performance.now();
    let lastKey = '';
    let idle = 0;
    while (!finished) {
      // Poll on the event loop; once nothing has changed for a few turns, back off to a timer
      // so that the main thread does not spin against the workers (2 cores).
      await new Promise((resolve) => (idle < 8 ? setImmediate(resolve) : setTimeout(resolve, 1)));
      let working = 0;
      let requesting = 0;
      let done = 0;
      for (const p of phase.values()) {
        if (p === 'working') working++;
        else if (p === 'requesting') requesting++;
        else done++;
      }
      const key = `${phase.size}/${working}/${requesting}/${parked.size}/${clock.pending}/${clock.now()}`;
      if (key !== lastKey) {
        lastKey = key;
        lastChange = performance.now();
        idle = 0;
      } else idle++;
      if (clock.pending === 0) continue;
      const held = options.warm !== 'none' && !firstResponseBegun;
      const gate = options.gate?.();
      const quiescent = gate
        ? phase.size === Math.min(options.forks, (options.slots ?? options.forks) + done) &&
          working === 0 &&
          requesting === parked.size + gate.waiting &&
          clock.pending === parked.size + gate.sleepers
        : (phase.size === options.forks || (phase.size === 0 && options.warm === 'prewarm')) &&
          working === 0 &&
          clock.pending === parked.size &&
          (held ? parked.size === 1 : requesting === parked.size);
      if (quiescent) clock.advanceToNext();
      else if (performance.now() - lastChange > (options.stallMs ?? 5_000)) {
        forcedSteps++;
        clock.advanceToNext();
      }
    }
    const result = await settled;
    await listen;
    return { ...result, makespanMs: clock.now() - t0, forcedSteps };
  } finally {
    for (const unsubscribe of off) unsubscribe();
  }
}
