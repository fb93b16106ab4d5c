import { accessSync, constants } from 'node:fs';
import path from 'node:path';

/**
 * The first executable `name` in `dirs`, or undefined. The sandbox's helpers (bwrap, unshare,
 * mkfs and mount) are looked up in fixed folders or a given PATH, never in the fork's.
 */
export function findExecutable(name: string, dirs: readonly string[]): string | undefined {
  for (const dir of dirs) {
    if (dir === '') continue;
    const file = path.join(dir, name);
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // not here
    }
  }
  return undefined;
}
