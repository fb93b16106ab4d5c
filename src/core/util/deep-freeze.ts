/**
 * Freeze a value and everything it holds. Snapshots, tool declarations and a manifest's
 * snapshot end up in request bytes: a later write to one would change a cache key silently.
 */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
