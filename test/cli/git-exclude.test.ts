import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { renamePlan } from './board/plan-500.ts';
import { forkcache } from './run-cli.ts';

// A run inside a repository keeps its run directory and its plan file out of `git status`:
// both go to the clone's own `.git/info/exclude`, once however many runs, and the
// repository's tracked `.gitignore` is never touched.

const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd, encoding: 'utf8' });

function repoWithPlan(runDir: string): { dir: string; plan: string } {
  const { dir, plan } = renamePlan(2);
  const json = JSON.parse(readFileSync(plan, 'utf8')) as Record<string, unknown>;
  writeFileSync(plan, JSON.stringify({ ...json, runDir }));
  writeFileSync(join(dir, '.gitignore'), 'node_modules/\n');
  git(dir, 'init', '-q');
  git(dir, 'add', 'src', '.gitignore');
  git(dir, 'commit', '-qm', 'init');
  return { dir, plan };
}

describe('forkcache run inside a repository', () => {
  it('adds .forkcache/ and the plan to .git/info/exclude once, and leaves .gitignore alone', async () => {
    const { dir, plan } = repoWithPlan('.forkcache/runs');
    for (let i = 0; i < 2; i++) {
      git(dir, 'checkout', '-q', '--', 'src');
      const run = await forkcache(['run', plan, '--api', 'emulator', '--json']);
      expect(run.code, run.stderr.slice(-1500)).toBe(0);
    }
    const exclude = readFileSync(join(dir, '.git', 'info', 'exclude'), 'utf8').split('\n');
    expect(exclude.filter((l) => l === '/.forkcache/')).toHaveLength(1);
    expect(exclude.filter((l) => l === '/plan.json')).toHaveLength(1);
    expect(readFileSync(join(dir, '.gitignore'), 'utf8')).toBe('node_modules/\n');
    // what the forks changed is all git shows: no untracked run directory or plan
    const status = git(dir, 'status', '--porcelain', '--untracked-files=all').trimEnd().split('\n');
    expect(status.filter((l) => !l.startsWith(' M src/'))).toEqual([]);
  });

  it('excludes a run directory of its own name, and never a plan file git tracks', async () => {
    const { dir, plan } = repoWithPlan('out/runs');
    git(dir, 'add', 'plan.json');
    git(dir, 'commit', '-qm', 'plan');
    const run = await forkcache(['run', plan, '--api', 'emulator', '--json']);
    expect(run.code, run.stderr.slice(-1500)).toBe(0);
    const exclude = readFileSync(join(dir, '.git', 'info', 'exclude'), 'utf8').split('\n');
    expect(exclude).toContain('/out/runs/');
    expect(exclude).not.toContain('/plan.json');
    expect(exclude).not.toContain('/out/');
  });
});
