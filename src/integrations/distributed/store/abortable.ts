/**
 * `work`, or a rejection with `reason()` as soon as one of `signals` aborts. Commands to a dead
 * Redis never settle (BullMQ needs `maxRetriesPerRequest: null`): whatever waits on Redis
 * waits through this, so a cancel, a lost Redis or a stopped engine ends the wait.
 */
export function abortable<T>(work: Promise<T>, signals: readonly AbortSignal[], reason: () => unknown): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const fail = (): void => reject(reason());
    if (signals.some((s) => s.aborted)) return fail();
    for (const s of signals) s.addEventListener('abort', fail, { once: true });
    work.then(resolve, reject).finally(() => {
      for (const s of signals) s.removeEventListener('abort', fail);
    });
  });
}
