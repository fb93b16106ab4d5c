import type { Clock } from '../../util/clock.ts';
import type { AdmissionScheduler } from './scheduler.ts';

/**
 * The budget over time, for the report: one `budget` record per second of engine time at
 * most, while the budget moves (admissions, settlements), once the API has told its limits
 * (nothing to draw against before; the emulator sends none by default). Returns the unsubscribe.
 */
export function sampleBudget(
  admission: AdmissionScheduler,
  clock: Clock,
  write: (record: Record<string, unknown>) => void,
): () => void {
  let last = Number.NEGATIVE_INFINITY;
  return admission.onChange((view) => {
    const at = clock.now();
    if (at - last < 1000 || !view.classes.some((c) => c.limits.rpm !== undefined || c.limits.itpm !== undefined))
      return;
    last = at;
    const classes = view.classes.map(({ modelClass, limits, used, queued, inFlight }) => ({
      modelClass,
      limits,
      used,
      queued,
      inFlight,
    }));
    write({ type: 'budget', at, waiting: view.waiting, classes });
  });
}
