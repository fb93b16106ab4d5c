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
 * - every `.git` entry, at any depth, in any letter case, and every name git takes for one
 *   (`isGitDirName`): a fork that writes `.git/config`, `.git/hooks` or a worktree's `.git`
 *   pointer steers the git forkcache and the user run on the host; reading it shows other
 *   forks' branches. A name git refuses to add (`.git.`) also made forkcache's commit of the
 *   fork fail.
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
    if (parts.some(isGitDirName))
      return "is or is inside a .git directory, or a name git takes for one (git metadata is out of the tools' reach)";
    for (const dir of this.#dirs) {
      if (isInside(dir, root)) continue; // the workspace lives in it (a worktree): its own files are fine
      if (isInside(dir, real)) return "is inside forkcache's run or state directory (out of the tools' reach)";
    }
    return undefined;
  }
}

// Code points HFS+ ignores in names (git's is_hfs_dotgit): `.g\u200cit` is `.git` on a Mac.
const HFS_IGNORED = /[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]/g;
// git's is_ntfs_dotgit: `.git` or its 8.3 short name `git~1`, then only dots and spaces (which
// NTFS drops) up to the end or a `:` (an alternate data stream); a backslash separates there.
const NTFS_DOTGIT = /^(?:\.git|git~1)[. ]*(?::|$)/;

/**
 * Whether git treats one path component as its own directory on some file system: `.git` in
 * any letter case, and the aliases git's `verify_path` refuses (`.git.`, `.GIT `, `git~1`,
 * `.git::$INDEX_ALLOCATION`, `a\.git`, and `.git` with HFS-ignored code points in it). git
 * refuses to add them, so a fork that made one would also break the commit of its worktree.
 */
function isGitDirName(component: string): boolean {
  const name = component.replace(HFS_IGNORED, '').toLowerCase();
  return name.split('\\').some((segment) => NTFS_DOTGIT.test(segment));
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
