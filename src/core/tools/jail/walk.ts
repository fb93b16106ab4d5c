import type { Dirent } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { openDirInside } from './dir-handle.ts';
import type { PathScope } from './jail.ts';

type EntryKind = 'file' | 'dir' | 'symlink' | 'other';

interface WalkEntry {
  /** Relative to the workspace root, `/`-separated. */
  readonly relative: string;
  readonly kind: EntryKind;
}

interface WalkOutcome {
  readonly entries: readonly WalkEntry[];
  /** True when the walk stopped at `maxEntries` before seeing everything. */
  readonly truncated: boolean;
}

export function kindOf(entry: Dirent): EntryKind {
  if (entry.isSymbolicLink()) return 'symlink';
  if (entry.isDirectory()) return 'dir';
  return entry.isFile() ? 'file' : 'other';
}

/** Join workspace-relative parts (`''` is the root). */
function joinRelative(base: string, name: string): string {
  return base === '' ? name : `${base}/${name}`;
}

/**
 * Every entry below a jailed directory. Symlinks are reported, never followed: the start was
 * resolved by the jail, and without following links nothing below it can lie outside the
 * workspace (nor can a link cycle make the walk endless). Unreadable directories are skipped,
 * and so is whatever `scope` protects (`.git`, the run directory): not listed, not entered.
 */
export async function walk(
  startReal: string,
  startRelative: string,
  maxEntries: number,
  signal: AbortSignal | undefined,
  scope: PathScope,
): Promise<WalkOutcome> {
  const entries: WalkEntry[] = [];
  const pending: Array<{ real: string; relative: string }> = [{ real: startReal, relative: startRelative }];
  while (pending.length > 0) {
    signal?.throwIfAborted();
    const dir = pending.pop() as { real: string; relative: string };
    let children: Dirent[];
    try {
      children = await readDirChecked(dir.real, scope);
    } catch {
      continue; // removed, unreadable, or swapped for a link since we listed it: nothing to report there
    }
    // Sorted, and subdirectories taken in order, so a walk cut short by maxEntries always
    // covers the same entries whatever order the file system lists them in.
    children.sort((a, b) => byCodeUnit(a.name, b.name));
    const subdirs: Array<{ real: string; relative: string }> = [];
    for (const child of children) {
      if (entries.length >= maxEntries) return { entries, truncated: true };
      const real = path.join(dir.real, child.name);
      if (scope.refusal(real) !== undefined) continue;
      const relative = joinRelative(dir.relative, child.name);
      const kind = kindOf(child);
      entries.push({ relative, kind });
      if (kind === 'dir') subdirs.push({ real, relative });
    }
    pending.push(...subdirs.reverse());
  }
  return { entries, truncated: false };
}

/**
 * The entries of a directory opened once and checked by its fd against `scope`: a directory
 * swapped for a symbolic link after it was listed is not followed (dir-handle.ts).
 */
export async function readDirChecked(real: string, scope: PathScope, display = real): Promise<Dirent[]> {
  const dir = await openDirInside(real, scope, display);
  try {
    return await readdir(dir.self, { withFileTypes: true });
  } finally {
    await dir.close();
  }
}

/** Plain code-unit order: the same on every machine and locale (cache parity of results). */
export function byCodeUnit(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
