import { mkdtempSync, readdirSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, repoWith } from '../tools/git-fixture.ts';
import { writePlan } from './review-fixture.ts';
import { forkcache, lastJson } from './run-cli.ts';

// Issue 34: peers publish a branch per repository from one spec. `forkcache push RUN --remote
// NAME` pushes one branch per fan-out to a real git remote (a bare repository made here): the
// run's base with every completed fork that merges cleanly, its message listing them.

const fanOutDir = (plan: string): string => {
  const runs = join(dirname(plan), 'runs');
  return join(
    runs,
    readdirSync(runs).find((d) => existsSync(join(runs, d, 'manifest.json')))!,
  );
};

describe('forkcache push', () => {
  it("pushes one branch carrying the run's clean forks to a bare remote, its message listing them", async () => {
    const repo = repoWith({ 'a.ts': 'export const fetchData = 1;\n', 'b.ts': 'export const fetchData = 2;\n' });
    const base = git(repo, 'rev-parse', 'HEAD');
    const remote = join(mkdtempSync(join(tmpdir(), 'fc-remote-')), 'origin.git');
    git(dirname(remote), 'init', '--quiet', '--bare', remote);
    git(repo, 'remote', 'add', 'origin', remote);
    const plan = writePlan(
      repo,
      [
        'rename fetchData to loadData in a.ts',
        'rename fetchData to loadData in b.ts',
        'rename fetchData to getData in b.ts',
        'rename nothingHere to other in a.ts',
      ],
      { isolation: 'worktree' },
    );
    expect((await forkcache(['run', plan, '--json'])).code).toBe(0);
    const dir = fanOutDir(plan);
    const fanout = dir.split('/').at(-1)!;

    const noRemote = await forkcache(['push', dir, '--remote', 'nowhere']);
    expect(noRemote.code).toBe(2);
    expect(noRemote.stderr).toMatch(/has no remote named nowhere/);

    const pushed = await forkcache(['push', dir, '--remote', 'origin', '--json']);
    expect(pushed.code).toBe(1); // f03 conflicts with f02 on b.ts: not carried, said
    const out = lastJson(pushed.stdout);
    expect(out['branch']).toBe(`forkcache/${fanout}`);
    expect(out['carried'].map((f: { fork_id: string }) => f.fork_id.slice(-3))).toEqual(['f01', 'f02']);
    expect(out['conflicts']).toEqual([{ fork_id: `${fanout}-f03`, files: ['b.ts'] }]);

    const tip = git(remote, 'rev-parse', `refs/heads/forkcache/${fanout}`);
    expect(tip).toBe(out['commit']);
    expect(git(remote, 'show', `${tip}:a.ts`)).toBe('export const loadData = 1;');
    expect(git(remote, 'show', `${tip}:b.ts`)).toBe('export const loadData = 2;');
    expect(git(remote, 'log', '-1', '--format=%P', tip).split(' ')[0]).toBe(base);
    const message = git(remote, 'log', '-1', '--format=%B', tip);
    expect(message).toMatch(new RegExp(`^forkcache merge ${fanout}: 2 fork\\(s\\)`));
    expect(message).toContain(`f01 forkcache/${fanout}-f01: rename fetchData to loadData in a.ts`);
    expect(message).toContain(`f02 forkcache/${fanout}-f02: rename fetchData to loadData in b.ts`);
    // the user's own branch did not move
    expect(git(repo, 'rev-parse', 'HEAD')).toBe(base);
  });
});
