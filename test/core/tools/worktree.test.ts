import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ForkEngine } from '../../../src/core/engine/engine.ts';
import { bigSnapshot, sharedEmulator, workspace } from '../engine/helpers.ts';
import { git, repoWith, withWorktreeEngine } from './git-fixture.ts';

const emulator = sharedEmulator({ script: 'refactor' });

describe("isolation: 'worktree'", () => {
  it('gives each fork its own worktree and branch: two forks edit one file without colliding', async () => {
    const repo = repoWith({ 'src/a.ts': 'export const fetchData = 1;\nexport const parseThing = 2;\n' });
    const runDir = workspace({});
    await withWorktreeEngine(emulator.current.url, repo, runDir, async (engine) => {
      const fan = engine.fanOut(bigSnapshot(`wt-${Date.now()}`), [
        'rename fetchData to loadData in src/a.ts',
        'rename parseThing to parseItem in src/a.ts',
      ]);
      const { forks } = await fan.settled();
      expect(forks.map((f) => f.status)).toEqual(['completed', 'completed']);
      const [one, two] = forks.map((f) => f.worktree!);
      expect(one!.branch).toBe(`forkcache/${forks[0]!.forkId}`);
      expect(one!.diffStat).toMatch(/src\/a\.ts \| 2 \+-/);
      expect(two!.diffStat).toMatch(/src\/a\.ts \| 2 \+-/);
      // each branch holds exactly its own change
      expect(git(repo, 'show', `${one!.branch}:src/a.ts`)).toBe(
        'export const loadData = 1;\nexport const parseThing = 2;',
      );
      expect(git(repo, 'show', `${two!.branch}:src/a.ts`)).toBe(
        'export const fetchData = 1;\nexport const parseItem = 2;',
      );
      // the main working tree is untouched
      expect(readFileSync(join(repo, 'src/a.ts'), 'utf8')).toBe(
        'export const fetchData = 1;\nexport const parseThing = 2;\n',
      );
      expect(git(repo, 'status', '--porcelain')).toBe('');
    });
  });

  it('needs a git repository and a run directory, and says so', async () => {
    await expect(ForkEngine.create({ workspace: workspace(), isolation: 'worktree' })).rejects.toThrow(
      /isolation: 'worktree' needs runsDir/,
    );
    await withWorktreeEngine(emulator.current.url, workspace(), workspace({}), async (engine) => {
      const { forks } = await engine.fanOut(bigSnapshot(), ['read a.ts and report']).settled();
      expect(forks[0]!.status).toBe('failed');
      expect(forks[0]!.error?.message).toMatch(/needs the workspace in a git repository/);
    });
  });
});
