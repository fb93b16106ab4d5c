import { locateFanOuts } from '../../core/run-dir/locate.ts';

interface LocatedRuns {
  /** Run directories to render, oldest first. */
  dirs: string[];
  /** How many run directories RUN_DIR holds (1 when it is one). */
  found: number;
  /** One sentence for the page and the terminal: what was rendered, and why. */
  scope: string;
}

/**
 * RUN_DIR is one run directory (it has a manifest.json), or a runs directory whose
 * sub-directories are fan-outs: then the latest one (by start time, see run-dir/locate.ts) is
 * rendered, or all of them with `all`.
 */
export function locateRuns(runDir: string, options: { all: boolean }): LocatedRuns {
  const ordered = locateFanOuts(runDir, 'REPORT_FILE_MISSING');
  if (ordered.length === 1 && ordered[0] === runDir)
    return { dirs: [runDir], found: 1, scope: `run directory ${runDir}` };
  if (options.all)
    return { dirs: ordered, found: ordered.length, scope: `all ${ordered.length} fan-outs of ${runDir}, oldest first` };
  const latest = ordered.at(-1)!;
  const more = ordered.length > 1 ? `; --all renders all ${ordered.length}` : '';
  return {
    dirs: [latest],
    found: ordered.length,
    scope: `the latest of ${ordered.length} fan-out(s) in ${runDir}: ${latest}${more}`,
  };
}
