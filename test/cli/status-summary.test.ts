import { describe, expect, it } from 'vitest';
import { formatRun } from '../../src/cli/commands/status.ts';
import type { ForkReview, RunReview } from '../../src/cli/review/run-forks.ts';
import type { Manifest } from '../../src/core/run-dir/manifest.ts';

// Issue 42: `status` of a 256-fork run was 259 lines with no summary. It counts the forks by
// status before and after the rows, and `--not-done` keeps only the forks not done.

function run(forks: number, notDone: ReadonlySet<number>): RunReview {
  const rows: ForkReview[] = Array.from({ length: forks }, (_, i) => ({
    forkId: `fo001-ab-f${String(i + 1).padStart(3, '0')}`,
    index: i,
    short: `f${String(i + 1).padStart(3, '0')}`,
    directive: `rename fetchDataFromTheRemoteService to loadData in src/file${i}.ts`,
    status: notDone.has(i) ? 'check_failed' : 'completed',
    turns: 3,
    costUsd: 0.01,
    filesChanged: [`src/file${i}.ts`],
    error: notDone.has(i) ? { code: 'FORK_CHECK_FAILED', message: 'the check failed' } : undefined,
  }));
  return {
    dir: '/runs/fo001-ab',
    manifest: { fanoutId: 'fo001-ab', requireChange: false } as unknown as Manifest,
    isolation: 'none',
    base: undefined,
    forks: rows,
  };
}

describe('forkcache status at 300 forks', () => {
  it('counts by status before and after the rows, and --not-done lists only the forks not done', () => {
    const big = run(300, new Set([4, 150, 299]));
    const all = formatRun(big).split('\n');
    const summary = 'by status: completed 297, check_failed 3; not done 3';
    expect(all[2]).toBe(summary); // after the header and the directives' common opening
    expect(all.at(-2)).toBe(summary);
    expect(all.at(-1)).toBe('only the forks not done: --not-done');
    expect(all.filter((l) => /^f\d{3} /.test(l))).toHaveLength(300);

    const short = formatRun(big, { notDone: true }).split('\n');
    expect(short.filter((l) => /^f\d{3} /.test(l)).map((l) => l.split(/\s+/)[0])).toEqual(['f005', 'f151', 'f300']);
    expect(short).toContain(summary);
    expect(short.length).toBeLessThan(15);
  });

  it('a short run has its summary once, and no hint', () => {
    const lines = formatRun(run(3, new Set())).split('\n');
    expect(lines.filter((l) => l.startsWith('by status:'))).toEqual(['by status: completed 3; not done 0']);
    expect(lines.at(-1)).not.toContain('--not-done');
  });
});
