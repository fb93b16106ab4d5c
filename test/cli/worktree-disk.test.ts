import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { repoWith } from '../core/tools/git-fixture.ts';
import { writePlan } from './review-fixture.ts';
import { forkcache, lastJson } from './run-cli.ts';

// Issue 34: whole worktrees (a plan that cannot be sparse) cost one checkout per running fork:
// 16 of them at once were 9.5× the 22 MB of rxjs 7.8.1. Here 60 forks each measure, from
// inside their own worktree, what every worktree of the run takes on disk at that moment
// (`du` of the worktrees' folder); each measure must stay under twice the repository, so the
// repository and its worktrees together stay under three times it.

const FORKS = 60;
const kb = (path: string): number => Number(execFileSync('du', ['-sk', path]).toString().split('\t')[0]);

describe('whole worktrees at 60 forks (issue 34)', () => {
  it('never take more than twice the repository at once', async () => {
    // 40 files of 6 KB: a checkout of about 330 KB beside a git dir of about as much
    const files = Object.fromEntries(
      Array.from({ length: 40 }, (_, i) => [`src/m${i}.ts`, `export const v${i} = '${String(i).repeat(6000)}';\n`]),
    );
    const repo = repoWith(files);
    const repository = kb(repo);
    const directives = Array.from({ length: FORKS }, () => 'run `du -sk .. 2>/dev/null | cut -f1` and report');
    const plan = writePlan(repo, directives, { isolation: 'worktree', allow: ['read_file', 'bash'], sandbox: 'none' });
    const ran = await forkcache(['run', plan, '--json']);
    expect(ran.code, ran.stderr.slice(-2000)).toBe(0);
    const summary = lastJson(ran.stdout);
    expect(summary.forks.completed).toBe(FORKS);
    const seen = (summary.fork_results as { report: { result: string } }[]).map((f) =>
      Number(/printed "(\d+)"/.exec(f.report.result)?.[1]),
    );
    expect(seen.every((n) => Number.isInteger(n) && n > 0)).toBe(true);
    // before: up to 16 checkouts at once (2 threads × 8 forks), about 16 × 330 KB
    expect(Math.max(...seen), `repository ${repository} KB`).toBeLessThanOrEqual(2 * repository);
  });
});
