import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ForkcacheError } from '../errors.ts';
import { recordType } from '../run-dir/jsonl.ts';
import { readReportJsonl } from './read-files.ts';

export interface LocatedRuns {
  /** Fan-out directories to render, oldest first. */
  dirs: string[];
  /** How many fan-out directories RUN_DIR holds (1 when it is one). */
  found: number;
  /** One sentence for the page and the terminal: what was rendered, and why. */
  scope: string;
}

const isFanOutDir = (dir: string): boolean => existsSync(join(dir, 'manifest.json'));

/** When a fan-out started: its last `fanout-start` record, else the manifest's mtime. */
function startedAt(dir: string): number {
  const events = join(dir, 'events.jsonl');
  if (existsSync(events)) {
    const start = readReportJsonl(events, 'fan-out events').findLast((l) => recordType(l.value) === 'fanout-start');
    const at = (start?.value as { at?: unknown } | undefined)?.at;
    if (typeof at === 'number') return at;
  }
  return statSync(join(dir, 'manifest.json')).mtimeMs;
}

/**
 * RUN_DIR is one fan-out directory (it has a manifest.json), or a runs directory whose
 * sub-directories are fan-outs: then the latest one is rendered, or all of them with `all`.
 * "Latest" is by the fan-out's start time, not by name: ids restart at fo001 with every engine.
 */
export function locateRuns(runDir: string, options: { all: boolean }): LocatedRuns {
  if (!existsSync(runDir) || !statSync(runDir).isDirectory()) {
    throw new ForkcacheError('REPORT_FILE_MISSING', `${runDir}: no such directory`, { data: { file: runDir } });
  }
  if (isFanOutDir(runDir)) return { dirs: [runDir], found: 1, scope: `fan-out directory ${runDir}` };
  const dirs = readdirSync(runDir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && isFanOutDir(join(runDir, e.name)))
    .map((e) => join(runDir, e.name));
  if (dirs.length === 0) {
    throw new ForkcacheError('REPORT_FILE_MISSING', `${runDir}: no manifest.json here nor in any sub-directory (expected a fan-out directory or a runs directory)`, { data: { file: join(runDir, 'manifest.json') } });
  }
  const ordered = dirs.map((dir) => ({ dir, at: startedAt(dir) })).sort((a, b) => a.at - b.at).map((x) => x.dir);
  if (options.all) return { dirs: ordered, found: ordered.length, scope: `all ${ordered.length} fan-outs of ${runDir}, oldest first` };
  const latest = ordered.at(-1)!;
  const more = ordered.length > 1 ? `; --all renders all ${ordered.length}` : '';
  return { dirs: [latest], found: ordered.length, scope: `the latest of ${ordered.length} fan-out(s) in ${runDir}: ${latest}${more}` };
}
