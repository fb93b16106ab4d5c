import { realpathSync } from 'node:fs';
import path from 'node:path';

/** True when `child` is `parent` or lies below it (both absolute and normalized). */
export function isInside(parent: string, child: string): boolean {
  const rel = path.relative(parent, child);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

/**
 * Places inside a workspace that no tool may read, list, search or write (issue 24, route 2):
 *
 * - forkcache's own directories given by the engine: the run directory (by default
 *   `.forkcache/runs` *inside* the workspace: a fork rewrote the manifest `resume` trusted) and
 *   its state directory (the key that signs run directories). One that contains the workspace
 *   itself is skipped: a worktree lives in the run directory, and it is the fork's own.
 * - every `.git` entry, at any depth, in any letter case: a fork that writes `.git/config`,
 *   `.git/hooks` or a worktree's `.git` pointer steers the git forkcache and the user run on the
 *   host; reading it shows other forks' branches.
 */
export class ProtectedPaths {
  readonly #dirs: readonly string[];

  /** `dirs`: absolute directories; their realpath is used when they exist. */
  constructor(dirs: readonly string[] = []) {
    this.#dirs = [...new Set(dirs.map((d) => realOrResolved(d)))];
  }

  /** The directories, as their realpaths (for the bash sandbox, which masks them). */
  get dirs(): readonly string[] {
    return this.#dirs;
  }

  /** Why `real` (a realpath inside `root`) is out of the tools' reach, or undefined when it is not. */
  reason(root: string, real: string): string | undefined {
    const parts = path.relative(root, real).split(path.sep);
    if (parts.some((p) => p.toLowerCase() === '.git'))
      return "is inside a .git directory (git metadata is out of the tools' reach)";
    for (const dir of this.#dirs) {
      if (isInside(dir, root)) continue; // the workspace lives in it (a worktree): its own files are fine
      if (isInside(dir, real)) return "is inside forkcache's run or state directory (out of the tools' reach)";
    }
    return undefined;
  }
}

/** The realpath of `dir`, or of its deepest existing ancestor joined with the missing rest. */
function realOrResolved(dir: string): string {
  const resolved = path.resolve(dir);
  try {
    return realpathSync(resolved);
  } catch {
    const parent = path.dirname(resolved);
    return parent === resolved ? resolved : path.join(realOrResolved(parent), path.basename(resolved));
  }
}
