import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, loggingGit, repoWith } from '../core/tools/git-fixture.ts';
import { writePlan } from './review-fixture.ts';
import { forkcache, lastJson } from './run-cli.ts';

// Issue 34: worktree mode kept every fork's checkout until `clean` (1.49 GB for a 5 MB
// repository at 312 forks). Now a fork's worktree is removed once its commit is made (its
// branch holds the work), and `sparse` checks out only the directive's file.

const files = {
  'src/a.ts': 'export const fetchData = 1;\n',
  'src/b.ts': 'export const fetchData = 2;\n',
  'src/c.ts': 'export const other = 3;\n',
  'README.md': 'hello\n',
};

const fanOutDir = (plan: string): string => {
  const runs = join(dirname(plan), 'runs');
  return join(
    runs,
    readdirSync(runs).find((d) => existsSync(join(runs, d, 'manifest.json')))!,
  );
};

describe('worktrees live only while their fork runs (issue 34)', () => {
  it('leaves no worktree after the commits, sparse ones hold only their file, and the branches hold the work', async () => {
    const repo = repoWith(files);
    const base = git(repo, 'rev-parse', 'HEAD');
    const plan = writePlan(
      repo,
      [
        { directive: 'rename fetchData to loadData in src/a.ts', file: 'src/a.ts' },
        { directive: 'rename fetchData to loadData in src/b.ts', file: 'src/b.ts' },
        // what a sparse fork sees, and a file of the tree it was not given, written anyway
        { directive: 'run `ls -A . src > seen.txt; echo mine > src/c.ts` and report', file: 'src/b.ts' },
      ] as never,
      {
        isolation: 'worktree',
        sparse: true,
        allow: ['read_file', 'edit_file', 'write_file', 'bash'],
        sandbox: 'none',
      },
    );
    const ran = await forkcache(['run', plan, '--json']);
    expect(ran.code).toBe(0);
    const result = lastJson(ran.stdout);
    const dir = fanOutDir(plan);
    expect(existsSync(join(dir, 'worktrees')) ? readdirSync(join(dir, 'worktrees')) : []).toEqual([]);
    expect(git(repo, 'worktree', 'list', '--porcelain').match(/^worktree /gm)).toHaveLength(1);
    expect(
      readdirSync(join(git(repo, 'rev-parse', '--git-common-dir').replace(/^\.git$/, join(repo, '.git')), 'worktrees')),
    ).toEqual([]);

    const [one, two, three] = result['fork_results'].map((f: { branch: string }) => f.branch) as string[];
    expect(git(repo, 'show', `${one}:src/a.ts`)).toBe('export const loadData = 1;');
    expect(git(repo, 'show', `${two}:src/b.ts`)).toBe('export const loadData = 2;');
    // the sparse fork's commit changes what it wrote and nothing it was not given
    expect(git(repo, 'diff', '--name-status', base, one!)).toBe('M\tsrc/a.ts');
    expect(git(repo, 'show', `${three}:seen.txt`)).toBe('.:\n.git\nseen.txt\nsrc\n\nsrc:\nb.ts');
    expect(git(repo, 'show', `${three}:src/c.ts`)).toBe('mine');
    expect(git(repo, 'diff', '--name-status', base, three!).split('\n').sort()).toEqual(['A\tseen.txt', 'M\tsrc/c.ts']);

    // status and merge read the branches, not the worktrees
    const status = lastJson((await forkcache(['status', dir, '--json'])).stdout);
    expect(status['forks'].map((f: { files_changed: string[] }) => f.files_changed)).toEqual([
      ['src/a.ts'],
      ['src/b.ts'],
      ['seen.txt', 'src/c.ts'],
    ]);
    expect((await forkcache(['merge', dir])).code).toBe(0);
    expect(git(repo, 'show', 'HEAD:README.md')).toBe('hello');
    expect(git(repo, 'show', 'HEAD:src/c.ts')).toBe('mine');

    // a resume of the finished run takes each result from its branch: no worktree is made again
    const { bin, log } = loggingGit();
    const resumed = await forkcache(['resume', dir, '--json'], { PATH: `${bin}:${process.env['PATH']}` });
    expect(resumed.code).toBe(0);
    expect(lastJson(resumed.stdout)['fork_results'].map((f: { commit: string }) => f.commit)).toEqual(
      result['fork_results'].map((f: { commit: string }) => f.commit),
    );
    expect(readFileSync(log, 'utf8')).toBe('');
  });

  it('forkcache plan --sparse writes the field, and sparse without worktrees is bad input naming it', async () => {
    const repo = repoWith(files);
    const args = [
      'plan',
      '--workspace',
      repo,
      '--files',
      'src/*.ts',
      '--directive',
      'rename fetchData to loadData in {file}',
    ];
    const alone = await forkcache([...args, '--sparse']);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toMatch(/--sparse: needs --isolation worktree/);
    const made = await forkcache([...args, '--sparse', '--isolation', 'worktree']);
    expect(made.code).toBe(0);
    expect(JSON.parse(made.stdout)).toMatchObject({ isolation: 'worktree', sparseWorktrees: true });
    const shared = await forkcache([
      'run',
      writePlan(repo, ['rename fetchData to loadData in src/a.ts'], { sparse: true }),
    ]);
    expect(shared.code).toBe(2);
    expect(shared.stderr).toMatch(/sparse: needs "isolation": "worktree"/);
  });
});
