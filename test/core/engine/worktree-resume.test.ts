import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ForkEngine } from '../../../src/core/engine/engine.ts';
import { readManifest } from '../../../src/core/run-dir/manifest.ts';
import { transcriptPath } from '../../../src/core/run-dir/files.ts';
import { git, repoWith, withWorktreeEngine } from '../tools/git-fixture.ts';
import { bigSnapshot, sharedEmulator, workspace } from './helpers.ts';

const emulator = sharedEmulator({ script: 'refactor' });

const files = {
  'a.ts': 'export const fetchData = 1;\n',
  'b.ts': 'export const fetchData = 2;\n',
  'c.ts': 'export const fetchData = 3;\n',
  'd.ts': 'export const fetchData = 4;\n',
};

const withEngine = <T>(repo: string, runDir: string, work: (engine: ForkEngine) => Promise<T>): Promise<T> =>
  withWorktreeEngine(emulator.current.url, repo, runDir, work);

describe('worktrees on resume', () => {
  it('recreates a fork whose creation failed from the recorded base, even after HEAD moved', async () => {
    const repo = repoWith(files);
    const base = git(repo, 'rev-parse', 'HEAD');
    const runDir = workspace({});
    const first = await withEngine(repo, runDir, (engine) =>
      engine
        .fanOut(
          bigSnapshot(`wt-resume-${Date.now()}`),
          Object.keys(files).map((f) => `rename fetchData to loadData in ${f}`),
        )
        .settled(),
    );
    expect(first.forks.map((f) => f.status)).toEqual(['completed', 'completed', 'completed', 'completed']);
    const dir = join(runDir, first.fanOutId);
    expect(readManifest(dir).worktrees).toEqual({ repo: git(repo, 'rev-parse', '--show-toplevel'), base });
    const [, two, three, four] = first.forks.map((f) => f.forkId);
    // each worktree was removed once committed (its branch keeps the work)
    expect(existsSync(join(dir, 'worktrees')) ? readdirSync(join(dir, 'worktrees')) : []).toEqual([]);
    // fork 2: `worktree add -b` made its branch and failed; fork 3: a half-made directory, no branch
    git(repo, 'branch', '-f', `forkcache/${two}`, base);
    git(repo, 'branch', '-D', `forkcache/${three}`);
    mkdirSync(join(dir, 'worktrees', three!));
    writeFileSync(join(dir, 'worktrees', three!, 'c.ts'), 'half');
    // fork 4: never created at all (its worktree, branch and transcript are gone)
    git(repo, 'branch', '-D', `forkcache/${four}`);
    for (const id of [two!, three!, four!]) rmSync(transcriptPath(dir, id));
    // meanwhile the user's branch moves on
    writeFileSync(join(repo, 'd.ts'), 'export const fetchData = 4;\nexport const moved = true;\n');
    git(repo, 'commit', '--quiet', '-am', 'HEAD moves');
    const again = await withEngine(repo, runDir, (engine) => engine.resume(dir).settled());
    expect(again.forks.map((f) => f.status)).toEqual(['completed', 'completed', 'completed', 'completed']);
    for (const [id, file, n] of [
      [two!, 'b.ts', 2],
      [three!, 'c.ts', 3],
    ] as const) {
      expect(git(repo, 'rev-parse', `forkcache/${id}^`)).toBe(base);
      expect(git(repo, 'show', `forkcache/${id}:${file}`)).toBe(`export const loadData = ${n};`);
    }
    expect(again.forks[0]!.worktree?.commit).toBe(first.forks[0]!.worktree?.commit);
    // the half-made directory was replaced, and every worktree is gone again once committed
    expect(readdirSync(join(dir, 'worktrees'))).toEqual([]);
  });

  it("a rerun after its run directory was deleted takes a new fan-out id: an old run's branches are never reused", async () => {
    const repo = repoWith({ 'a.ts': files['a.ts'] });
    const snapshot = bigSnapshot(`wt-rerun-${Date.now()}`);
    const runDir = workspace({});
    const directives = ['rename fetchData to loadData in a.ts'];
    const first = await withEngine(repo, runDir, (engine) => engine.fanOut(snapshot, directives).settled());
    rmSync(runDir, { recursive: true });
    git(repo, 'worktree', 'prune');
    const second = await withEngine(repo, runDir, (engine) => engine.fanOut(snapshot, directives).settled());
    expect(second.fanOutId).not.toBe(first.fanOutId);
    expect(second.forks[0]!.status).toBe('completed');
    // it started from the base, not from the old run's commit
    expect(git(repo, 'rev-parse', `${second.forks[0]!.worktree!.branch}^`)).toBe(git(repo, 'rev-parse', 'main'));
  });
});
