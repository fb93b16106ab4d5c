import { rmSync } from 'node:fs';
import { isAbsolute, relative } from 'node:path';
import type { DemoResult } from './run-demo.ts';

/** What the parent line says: the model's last words, or where Ctrl-C stopped it, with the forks counted by status. */
export function parentLine(demo: Pick<DemoResult, 'parentText' | 'parentInterrupted' | 'result'>): string {
  if (!demo.parentInterrupted) return demo.parentText;
  const byStatus = new Map<string, number>();
  for (const f of demo.result.forks) byStatus.set(f.status, (byStatus.get(f.status) ?? 0) + 1);
  const counts = [...byStatus].map(([status, n]) => `${n} ${status}`).join(', ');
  return `${demo.parentText} (Ctrl-C); of its ${demo.result.forks.length} fork(s): ${counts}`;
}

/** A list of files, the first few named: an interrupted 500-fork demo leaves hundreds. */
export function someFiles(files: readonly string[], shown = 5): string {
  if (files.length === 0) return 'none';
  const named = files.slice(0, shown).join(', ');
  return files.length > shown ? `${files.length} files (${named}, …)` : named;
}

const inside = (path: string, dir: string): boolean => {
  const rel = relative(dir, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
};

/**
 * The demo's temporary workspace once the run is over: removed after a clean run, unless
 * asked to keep it or the report was written inside it; kept after a failed or interrupted
 * run (its transcripts are what `resume` continues from). Says which, naming it in full.
 */
export function settleWorkspace(
  workspace: string,
  how: { ok: boolean; keep: boolean; report: string | undefined },
): { kept: boolean; line: string } {
  if (!how.ok)
    return {
      kept: true,
      line: `workspace kept at ${workspace} (the run did not finish cleanly); transcripts in its .forkcache/runs`,
    };
  if (how.keep) return { kept: true, line: `workspace kept at ${workspace} (--keep-workspace)` };
  if (how.report && inside(how.report, workspace))
    return { kept: true, line: `workspace kept at ${workspace} (the report is inside it)` };
  rmSync(workspace, { recursive: true, force: true });
  return { kept: false, line: `workspace ${workspace} removed (--keep-workspace keeps it)` };
}
