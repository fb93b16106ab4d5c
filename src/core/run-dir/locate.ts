import { type Dirent, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ForkcacheError } from '../util/errors.ts';
import type { FileCode } from '../util/json-file.ts';
import { EVENTS_FILE, isFanOutDir, MANIFEST_FILE } from './files.ts';
import { readJsonl, recordType } from './jsonl.ts';

/**
 * When a fan-out started: the `at` of its last `fanout-start` event (a resume appends another),
 * else its manifest's mtime. The locator orders, it does not validate: an unreadable events
 * file falls back to the mtime, and whoever reads the run reports what is wrong with it.
 */
function startedAt(dir: string): number {
  try {
    const start = readJsonl(join(dir, EVENTS_FILE), 'fan-out events').findLast(
      (l) => recordType(l.value) === 'fanout-start',
    );
    const at = (start?.value as { at?: unknown } | undefined)?.at;
    if (typeof at === 'number') return at;
  } catch {
    // no events yet, or a damaged file: order by the manifest instead
  }
  return statSync(join(dir, MANIFEST_FILE)).mtimeMs;
}

/** Where a retry plan written inside a run directory put its run in forkcache 0.4.0 and before (`runsDir` read from the plan's folder). */
const NESTED_RUNS = join('.forkcache', 'runs');

/**
 * The run directories directly in a runs directory, and those a retry plan nested inside one of
 * them (`runs/fo001-…/.forkcache/runs/fo002-…`, issue 42): `merge` and `clean` of the runs
 * directory must see them too (17 branches were left behind).
 */
function fanOutsIn(runsDir: string, depth = 0): string[] {
  let entries: Dirent[];
  try {
    entries = readdirSync(runsDir, { withFileTypes: true });
  } catch {
    return [];
  }
  const dirs = entries
    .filter((e) => e.isDirectory() && isFanOutDir(join(runsDir, e.name)))
    .map((e) => join(runsDir, e.name));
  // a retry of a retry nests again; a few levels cover any real chain
  if (depth >= 8) return dirs;
  return [...dirs, ...dirs.flatMap((dir) => fanOutsIn(join(dir, NESTED_RUNS), depth + 1))];
}

/**
 * The run directories of RUN_DIR, oldest first: RUN_DIR itself when it is one (it has a
 * manifest), else its sub-directories that are. The one locator of runs, for resume and the
 * report alike. "Oldest" is by start time, not by name: ids restart at fo001 with every engine.
 * `code` is the error when there is none (callers report bad input with their own code).
 */
export function locateFanOuts(runDir: string, code: FileCode): string[] {
  let kind: 'dir' | 'file' | 'missing';
  try {
    kind = statSync(runDir).isDirectory() ? 'dir' : 'file';
  } catch {
    kind = 'missing';
  }
  if (kind === 'file')
    throw new ForkcacheError(code, `${runDir} is a file; expected a run directory or a runs directory`, {
      data: { path: runDir },
    });
  if (kind === 'missing') throw new ForkcacheError(code, `${runDir}: no such directory`, { data: { path: runDir } });
  if (isFanOutDir(runDir)) return [runDir];
  const dirs = fanOutsIn(runDir);
  if (dirs.length === 0) {
    throw new ForkcacheError(
      code,
      `${runDir}: no ${MANIFEST_FILE} here nor in any sub-directory (expected a run directory or a runs directory)`,
      {
        data: { path: join(runDir, MANIFEST_FILE) },
      },
    );
  }
  return dirs
    .map((dir) => ({ dir, at: startedAt(dir) }))
    .sort((a, b) => a.at - b.at || (a.dir < b.dir ? -1 : 1))
    .map((x) => x.dir);
}
