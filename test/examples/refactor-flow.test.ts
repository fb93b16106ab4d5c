import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type RunResult, runProgram } from '../cli/run-cli.ts';

// examples/refactor-flow.sh is the refactor flow of docs/plans.md and docs/review.md as a
// script: it must run as written, with real forkcache processes and real git, in a temporary
// directory (nothing is written into the checkout), on the embedded emulator (no key).
const ROOT = resolve(import.meta.dirname, '../..');
const work = mkdtempSync(join(tmpdir(), 'forkcache-refactor-flow-test-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function runScript(dir: string): Promise<RunResult> {
  // The embedded emulator, whatever this shell has set; the checkout's own sources.
  const env = { TMPDIR: work, ANTHROPIC_API_KEY: undefined, ANTHROPIC_BASE_URL: undefined, FORKCACHE: undefined };
  return runProgram('bash', [join(ROOT, 'examples/refactor-flow.sh'), dir], { cwd: work, env });
}

const git = (repo: string, ...args: string[]): string =>
  spawnSync('git', ['-C', repo, ...args], { encoding: 'utf8' }).stdout.trim();

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesUnder(join(dir, e.name)) : [join(dir, e.name)],
  );
}

describe('examples/refactor-flow.sh', () => {
  it('plans, estimates, runs, reviews, merges and cleans: the old name is gone, no worktree is left', async () => {
    const before = git(ROOT, 'status', '--porcelain', '--', 'examples');
    const dir = join(work, 'flow');
    const { code, stdout, stderr } = await runScript(dir);
    expect({ code, stderr: code === 0 ? '' : stderr }).toEqual({ code: 0, stderr: '' });

    // Each step printed what it shows.
    for (const step of ['plan', 'run --dry-run', 'run', 'status', 'diff', 'merge', 'clean'])
      expect(stdout).toContain(`forkcache ${step}`);
    expect(stdout).toMatch(/8 directive\(s\)/);
    expect(stdout).toMatch(/dry run: 8 fork\(s\) merge cleanly into main/);

    // The merged tree: every source file renamed, in one merge commit on main.
    const repo = join(dir, 'repo');
    const sources = filesUnder(join(repo, 'src'));
    expect(sources.length).toBeGreaterThan(0);
    expect(sources.filter((f) => /\bfetchData\b/.test(readFileSync(f, 'utf8')))).toEqual([]);
    expect(sources.filter((f) => /\bloadData\b/.test(readFileSync(f, 'utf8'))).length).toBe(8);
    expect(git(repo, 'status', '--porcelain', '--untracked-files=no')).toBe('');
    expect(git(repo, 'log', '-1', '--format=%s')).toMatch(/^forkcache merge fo\d+-[0-9a-f]+: 8 fork\(s\)$/);
    expect(git(repo, 'rev-list', '--parents', '-n', '1', 'HEAD').split(' ')).toHaveLength(1 + 8 + 1);

    // Nothing left behind: one worktree (the repository's own), no forkcache/* branch.
    expect(git(repo, 'worktree', 'list', '--porcelain').match(/^worktree /gm)).toHaveLength(1);
    expect(git(repo, 'branch', '--list', 'forkcache/*')).toBe('');

    // Nothing written into the checkout.
    expect(git(ROOT, 'status', '--porcelain', '--', 'examples')).toBe(before);
  });
});
