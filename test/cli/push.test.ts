import { mkdtempSync, readdirSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, repoWith } from '../core/tools/git-fixture.ts';
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

  it("never rewrites a remote branch it did not make: a teammate's newer commit on main survives push --branch main", async () => {
    const files = Object.fromEntries(
      Array.from({ length: 12 }, (_, i) => [`m${i}.ts`, `export const fetchData = ${i};\n`]),
    );
    const repo = repoWith(files);
    const base = git(repo, 'rev-parse', 'HEAD');
    const remote = join(mkdtempSync(join(tmpdir(), 'fc-remote-')), 'origin.git');
    git(dirname(remote), 'init', '--quiet', '--bare', remote);
    git(repo, 'remote', 'add', 'origin', remote);
    git(repo, 'push', '--quiet', 'origin', 'main', 'main:refs/heads/ff');
    // a teammate pushes a commit to main after the run's base
    const mate = join(mkdtempSync(join(tmpdir(), 'fc-mate-')), 'clone');
    git(dirname(mate), 'clone', '--quiet', '--branch', 'main', remote, mate);
    git(mate, 'commit', '--quiet', '--allow-empty', '-m', 'teammate');
    git(mate, 'push', '--quiet', 'origin', 'main');
    const theirs = git(remote, 'rev-parse', 'refs/heads/main');
    expect(theirs).not.toBe(base);

    const plan = writePlan(
      repo,
      Object.keys(files).map((f) => `rename fetchData to loadData in ${f}`),
      { isolation: 'worktree' },
    );
    expect((await forkcache(['run', plan, '--json'])).code).toBe(0);
    const dir = fanOutDir(plan);
    const fanout = dir.split('/').at(-1)!;
    const refs = (): string => git(remote, 'for-each-ref', '--format=%(objectname) %(refname)');

    // not a fast-forward of main: refused, said, main untouched
    const refused = await forkcache(['push', dir, '--remote', 'origin', '--branch', 'main']);
    expect(refused.code, refused.stderr).toBe(1);
    expect(refused.stderr).toMatch(/origin main is at [0-9a-f]{10}, which the push does not carry/);
    expect(refused.stderr).toMatch(/--force-with-lease/);
    expect(git(remote, 'rev-parse', 'refs/heads/main')).toBe(theirs);

    // names that are not one branch: exit 2 naming the flag, nothing reaches git
    const before = refs();
    for (const name of ['a:refs/heads/b', '../../x', 'x/../y', '--force', '-x', 'a b', 'x.lock', '@{-1}', 'x~1']) {
      const bad = await forkcache(['push', dir, '--remote', 'origin', '--branch', name]);
      expect(bad.code, `${name}: ${bad.stderr}`).toBe(2);
      expect(bad.stderr).toMatch(/--branch/);
    }
    expect(refs()).toBe(before);

    // a fast-forward of a remote branch goes ahead; so does the run's own branch, pushed twice
    const ff = await forkcache(['push', dir, '--remote', 'origin', '--branch', 'ff']);
    expect(ff.code, ff.stderr).toBe(0);
    // at 12 forks the line gives a count, not 12 ids; --json and --verbose list them
    expect(ff.stdout).toMatch(/carries 12 fork\(s\) \(--verbose or --json lists them\)/);
    expect(ff.stdout.split('\n').every((l) => l.length < 200)).toBe(true);
    expect(git(remote, 'merge-base', '--is-ancestor', base, 'refs/heads/ff')).toBe('');
    // the run's own branch: an earlier push of this fan-out (not an ancestor) is replaced; a
    // commit someone else put on that branch is not
    const tree = git(repo, 'rev-parse', `${base}^{tree}`);
    const earlier = git(repo, 'commit-tree', tree, '-p', base, '-m', `forkcache merge ${fanout}: 1 fork(s)`);
    const foreign = git(repo, 'commit-tree', tree, '-p', base, '-m', 'work of a teammate');
    const own = `refs/heads/forkcache/${fanout}`;
    git(repo, 'push', '--quiet', 'origin', `${foreign}:${own}`);
    const notOurs = await forkcache(['push', dir, '--remote', 'origin']);
    expect(notOurs.code).toBe(1);
    expect(git(remote, 'rev-parse', own)).toBe(foreign);
    git(repo, 'push', '--quiet', '--force', 'origin', `${earlier}:${own}`);
    const again = await forkcache(['push', dir, '--remote', 'origin', '--verbose']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/carries 12 fork\(s\) \(f01, f02, .*f12\)/);
    expect(git(remote, 'rev-parse', own)).not.toBe(earlier);
    expect(git(remote, 'log', '-1', '--format=%s', own)).toMatch(new RegExp(`^forkcache merge ${fanout}: 12 fork`));

    // asked: --force-with-lease replaces main, but only while it is where the lease says
    const stale = await forkcache(['push', dir, '--remote', 'origin', '--branch', 'main', '--force-with-lease', base]);
    expect(stale.code).toBe(1);
    expect(stale.stderr).toMatch(/moved since it was read|lease/);
    expect(git(remote, 'rev-parse', 'refs/heads/main')).toBe(theirs);
    const forced = await forkcache([
      'push',
      dir,
      '--remote',
      'origin',
      '--branch',
      'main',
      '--force-with-lease',
      '--json',
    ]);
    expect(forced.code, forced.stderr).toBe(0);
    expect(git(remote, 'rev-parse', 'refs/heads/main')).toBe(lastJson(forced.stdout)['commit']);
  });
});
