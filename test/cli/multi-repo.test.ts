import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git } from '../core/tools/git-fixture.ts';
import { exampleParent, forkcache, lastJson } from './run-cli.ts';

// Issue 34, "Many repositories in one plan": one plan over three local repositories, each with
// a bare remote; every fork works in its own repository's worktree and branch, and status,
// merge, clean and push go repository by repository.

const RENAME = 'rename fetchData to loadData in {file}';

/** Folders `names` under one new folder, each a git repository on main with its files committed and a bare `origin`. */
function reposUnder(repos: Record<string, Record<string, string>>): { root: string; remotes: Record<string, string> } {
  const root = mkdtempSync(join(tmpdir(), 'fc-repos-'));
  const bare = mkdtempSync(join(tmpdir(), 'fc-remotes-'));
  const remotes: Record<string, string> = {};
  for (const [name, files] of Object.entries(repos)) {
    const dir = join(root, name);
    for (const [file, text] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, file)), { recursive: true });
      writeFileSync(join(dir, file), text);
    }
    git(dir, 'init', '--quiet', '-b', 'main');
    git(dir, 'add', '-A');
    git(dir, 'commit', '--quiet', '-m', 'base');
    remotes[name] = join(bare, `${name}.git`);
    git(bare, 'init', '--quiet', '--bare', remotes[name]);
    git(dir, 'remote', 'add', 'origin', remotes[name]);
  }
  return { root, remotes };
}

const plansDir = (): string => mkdtempSync(join(tmpdir(), 'fc-mplan-'));

const fanOutOf = (runs: string, not: string[] = []): string =>
  join(
    runs,
    readdirSync(runs).find((d) => existsSync(join(runs, d, 'manifest.json')) && !not.includes(d))!,
  );

const jsonLines = (stdout: string): Array<Record<string, any>> =>
  stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, any>);

const branches = (repo: string): string[] =>
  git(repo, 'for-each-ref', '--format=%(refname:short)', 'refs/heads/forkcache/').split('\n').filter(Boolean);

describe('a plan over several repositories', () => {
  it('plans, runs, pushes to each bare remote, merges with a retry plan and cleans, repository by repository', async () => {
    const { root, remotes } = reposUnder({
      api: { 'a.ts': 'export const fetchData = 1;\n', 'b.ts': 'export const fetchData = 2;\n' },
      // c.ts: the plan gets a second fork renaming fetchMore on the same line, a conflict
      web: { 'c.ts': 'export const fetchData = 3, fetchMore = 4;\n', 'README.md': 'no code\n' },
      cli: { 'd.ts': 'export const fetchData = 5;\n', 'e.ts': 'export const other = 6;\n' },
    });
    const bases = Object.fromEntries(['api', 'web', 'cli'].map((r) => [r, git(join(root, r), 'rev-parse', 'HEAD')]));
    // a configuration in one repository (as a fork with an unsandboxed shell could write it)
    // runs nothing in forkcache's git, and reaches no other repository
    const marks = mkdtempSync(join(tmpdir(), 'fc-marks-'));
    const canary = join(marks, 'canary.sh');
    writeFileSync(canary, `#!/bin/sh\ntouch '${marks}/ran'\n`);
    chmodSync(canary, 0o755);
    git(join(root, 'api'), 'config', 'core.fsmonitor', canary);

    // plan: the glob of repository folders, the file glob and regex inside each
    const dir = plansDir();
    const planPath = join(dir, 'plan.json');
    const planned = await forkcache([
      'plan',
      '--repos',
      `${root}/*`,
      '--files',
      '*.ts',
      '--grep',
      '\\bfetchData\\b',
      '--directive',
      RENAME,
      '--out',
      planPath,
    ]);
    expect(planned.stderr).toContain('api 2 file(s), cli 1 file(s), web 1 file(s)');
    expect(planned.code).toBe(0);
    const plan = JSON.parse(readFileSync(planPath, 'utf8')) as Record<string, any>;
    expect(plan['repos']).toEqual(['api', 'cli', 'web']);
    expect(plan['isolation']).toBe('worktree');
    expect(plan['directives']).toEqual([
      { directive: 'rename fetchData to loadData in a.ts', file: 'a.ts', repo: 'api' },
      { directive: 'rename fetchData to loadData in b.ts', file: 'b.ts', repo: 'api' },
      { directive: 'rename fetchData to loadData in d.ts', file: 'd.ts', repo: 'cli' },
      { directive: 'rename fetchData to loadData in c.ts', file: 'c.ts', repo: 'web' },
    ]);
    plan['directives'].push({ directive: 'rename fetchMore to loadMore in c.ts', file: 'c.ts', repo: 'web' });
    delete plan['check']; // the rename check names fetchData: the fifth fork renames another name
    plan['emulator'] = { script: 'refactor', latency: 'off' };
    writeFileSync(planPath, JSON.stringify(plan));

    // the dry run finds each directive's file in its own repository (c.ts twice: 4 files)
    const dry = await forkcache(['run', planPath, '--dry-run']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain('files: 5 of 5 directives name a file; 4 files');

    const ran = await forkcache(['run', planPath, '--json']);
    expect(ran.code, ran.stderr).toBe(0);
    const runs = join(dir, '.forkcache', 'runs');
    const fanDir = fanOutOf(runs);
    const fanout = fanDir.split('/').at(-1)!;
    // each fork's branch is in its own repository, and only there
    expect(branches(join(root, 'api'))).toEqual([`forkcache/${fanout}-f01`, `forkcache/${fanout}-f02`]);
    expect(branches(join(root, 'cli'))).toEqual([`forkcache/${fanout}-f03`]);
    expect(branches(join(root, 'web'))).toEqual([`forkcache/${fanout}-f04`, `forkcache/${fanout}-f05`]);
    expect(git(join(root, 'cli'), 'show', `forkcache/${fanout}-f03:d.ts`)).toBe('export const loadData = 5;');

    // status: one table (and JSON line) per repository, with its base
    const status = await forkcache(['status', fanDir, '--json']);
    expect(status.code).toBe(0);
    const views = jsonLines(status.stdout);
    expect(views.map((v) => [v['repo'], v['base'], v['forks'].length])).toEqual([
      ['api', bases['api'], 2],
      ['cli', bases['cli'], 1],
      ['web', bases['web'], 2],
    ]);
    expect(views[2]!['forks'][0]).toMatchObject({ status: 'completed', files_changed: ['c.ts'] });
    const web = await forkcache(['status', fanDir, '--repo', 'web']);
    expect(web.stdout).toMatch(new RegExp(`^${fanout} repo web: 2 forks, 2 completed`));
    expect(web.stdout).not.toContain('a.ts');

    const diff = await forkcache(['diff', fanDir, 'f03', 'f04']);
    expect(diff.stdout).toMatch(/^# repo cli \(.*\)\n# .*-f03 \(completed\)[^]*\+export const loadData = 5;/);
    expect(diff.stdout).toMatch(/# repo web \(.*\)\n# .*-f04 [^]*\+export const loadData = 3, fetchMore = 4;/);
    expect(diff.stdout).not.toContain('# repo api');

    // push: one branch per repository, to that repository's own remote, its description listing the forks
    const pushed = await forkcache(['push', fanDir, '--remote', 'origin', '--json']);
    expect(pushed.code).toBe(1); // f05 conflicts with f04 in web: not carried, said
    const pushes = jsonLines(pushed.stdout);
    expect(pushes.map((p) => [p['repo'], p['carried'].map((f: { fork_id: string }) => f.fork_id.slice(-3))])).toEqual([
      ['api', ['f01', 'f02']],
      ['cli', ['f03']],
      ['web', ['f04']],
    ]);
    expect(pushes[2]!['conflicts']).toEqual([{ fork_id: `${fanout}-f05`, files: ['c.ts'] }]);
    for (const p of pushes) {
      const remote = remotes[p['repo'] as string]!;
      const tip = git(remote, 'rev-parse', `refs/heads/forkcache/${fanout}`);
      expect(tip).toBe(p['commit']);
      expect(git(remote, 'log', '-1', '--format=%P', tip).split(' ')[0]).toBe(bases[p['repo'] as string]);
      expect(git(remote, 'log', '-1', '--format=%B', tip)).toBe(p['description']);
    }
    expect(git(remotes['api']!, 'show', `forkcache/${fanout}:b.ts`)).toBe('export const loadData = 2;');
    expect(git(remotes['api']!, 'log', '-1', '--format=%B', `forkcache/${fanout}`)).toContain(
      `f02 forkcache/${fanout}-f02: rename fetchData to loadData in b.ts`,
    );
    expect(git(remotes['web']!, 'show', `forkcache/${fanout}:c.ts`)).toBe('export const loadData = 3, fetchMore = 4;');
    // a remote holds only its own repository's work
    expect(() => git(remotes['web']!, 'show', `forkcache/${fanout}:a.ts`)).toThrow();
    const text = await forkcache(['push', fanDir, '--remote', 'origin', '--repo', 'cli']);
    expect(text.stdout).toContain('repo cli (');
    expect(text.stdout).toContain(`  f03 forkcache/${fanout}-f03: rename fetchData to loadData in d.ts`);

    // merge: a conflict in one repository applies nothing in any
    const blocked = await forkcache(['merge', fanDir, '--json']);
    expect(blocked.code).toBe(5); // nothing merged
    const none = lastJson(blocked.stdout);
    expect(none['repos'].map((r: { repo: string; commit: unknown }) => [r.repo, r.commit])).toEqual([
      ['api', null],
      ['cli', null],
      ['web', null],
    ]);
    for (const r of ['api', 'web', 'cli']) expect(git(join(root, r), 'rev-parse', 'HEAD')).toBe(bases[r]);

    // --clean-only: every repository's clean forks, and one retry plan for the conflicting one
    const merged = await forkcache(['merge', fanDir, '--clean-only']);
    expect(merged.code).toBe(4); // some merged, one left out
    expect(merged.stdout).toMatch(/repo api \(.*\)\n {2}merged {3}f01/);
    expect(merged.stdout).toMatch(/redo the 1 conflicting fork\(s\) of 1 repository\(ies\) .*: forkcache run (\S+)$/m);
    const retryPath = /forkcache run (\S+)$/m.exec(merged.stdout)![1]!;
    expect(readFileSync(join(root, 'api', 'a.ts'), 'utf8')).toBe('export const loadData = 1;\n');
    expect(readFileSync(join(root, 'cli', 'd.ts'), 'utf8')).toBe('export const loadData = 5;\n');
    const retry = JSON.parse(readFileSync(retryPath, 'utf8')) as Record<string, any>;
    expect(retry['repos']).toEqual(['web']);
    expect(retry['directives']).toEqual([
      { directive: 'rename fetchMore to loadMore in c.ts', file: 'c.ts', repo: 'web' },
    ]);

    // the retry plan redoes the conflicting fork on web's new HEAD; merging it ends the rename
    const again = await forkcache(['run', retryPath, '--json']);
    expect(again.code, again.stderr).toBe(0);
    const retryDir = fanOutOf(runs, [fanout]);
    const second = await forkcache(['merge', retryDir, '--repo', 'web']);
    expect(second.code, second.stdout).toBe(0);
    expect(readFileSync(join(root, 'web', 'c.ts'), 'utf8')).toBe('export const loadData = 3, loadMore = 4;\n');

    // clean, per repository: the merged branches go; f05's work is in no HEAD: kept without --force
    const cleaned = await forkcache(['clean', fanDir, '--json']);
    expect(cleaned.code).toBe(1);
    const cleans = jsonLines(cleaned.stdout);
    expect(cleans.map((c) => [c['repo'], c['removed'].length, c['kept'].length])).toEqual([
      ['api', 2, 0],
      ['cli', 1, 0],
      ['web', 1, 1],
    ]);
    expect(branches(join(root, 'api'))).toEqual([]);
    expect(branches(join(root, 'web'))).toEqual([
      `forkcache/${fanout}-f05`,
      `forkcache/${retryDir.split('/').at(-1)}-f01`,
    ]);
    expect((await forkcache(['clean', fanDir, '--repo', 'web', '--force'])).code).toBe(0);
    expect(branches(join(root, 'web'))).toEqual([`forkcache/${retryDir.split('/').at(-1)}-f01`]);
    expect(existsSync(join(marks, 'ran'))).toBe(false);
  });

  it('refuses bad repositories and plans, naming the field (exit 2)', async () => {
    const { root } = reposUnder({ api: { 'a.ts': 'export const fetchData = 1;\n' } });
    mkdirSync(join(root, 'plain'));
    writeFileSync(join(root, 'plain', 'x.ts'), 'export const fetchData = 1;\n');
    const planArgs = (...repos: string[]) => [
      'plan',
      ...repos.flatMap((r) => ['--repos', r]),
      '--files',
      '*.ts',
      '--directive',
      RENAME,
    ];

    const notGit = await forkcache(planArgs(`${root}/*`));
    expect(notGit.code).toBe(2);
    expect(notGit.stderr).toMatch(/--repos: repos\[1\]: plain is not a git work tree with a commit/);
    const missing = await forkcache(planArgs(join(root, 'api'), join(root, 'gone')));
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/--repos: .*gone does not exist/);
    const twice = await forkcache(planArgs(`${join(root, 'api')},${root}/api/`));
    expect(twice.code).toBe(2);
    expect(twice.stderr).toMatch(/--repos: .*api\/ is named twice/);
    const noMatch = await forkcache(planArgs(`${root}/nothing-*`));
    expect(noMatch.code).toBe(2);
    expect(noMatch.stderr).toMatch(/--repos: .*nothing-\* names no folder/);
    mkdirSync(join(root, 'has space'));
    const spaced = await forkcache(planArgs(join(root, 'has space')));
    expect(spaced.code).toBe(2);
    expect(spaced.stderr).toMatch(/--repos: has space: a folder relative to the workspace/);
    const shared = await forkcache([...planArgs(join(root, 'api')), '--isolation', 'none']);
    expect(shared.code).toBe(2);
    expect(shared.stderr).toMatch(/--isolation: a plan over several repositories runs in worktrees/);
    const both = await forkcache([...planArgs(join(root, 'api')), '--workspace', root]);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/--workspace: give either --workspace .* or --repos/);

    // a plan written by hand: each mistake named by its field
    const run = async (
      extra: Record<string, unknown>,
    ): Promise<{ code: number | null; stderr: string; dir: string }> => {
      const dir = plansDir();
      const path = join(dir, 'plan.json');
      const plan = {
        parent: exampleParent(),
        workspace: root,
        isolation: 'worktree',
        repos: ['api'],
        directives: [{ directive: 'rename fetchData to loadData in a.ts', file: 'a.ts', repo: 'api' }],
        emulator: { script: 'refactor', latency: 'off' },
        ...extra,
      };
      writeFileSync(path, JSON.stringify(plan));
      return { ...(await forkcache(['run', path])), dir };
    };
    const expectRefused = async (extra: Record<string, unknown>, message: RegExp): Promise<void> => {
      const result = await run(extra);
      expect(result.stderr).toMatch(message);
      expect(result.code).toBe(2);
    };
    await expectRefused({ repos: ['api', 'api'] }, /repos\[1\]: api is listed twice \(repos\[0\]\)/);
    await expectRefused(
      { repos: ['plain'], directives: [{ directive: 'x', repo: 'plain' }] },
      /repos\[0\]: plain is not a git work tree/,
    );
    await expectRefused(
      { repos: ['gone'], directives: [{ directive: 'x', repo: 'gone' }] },
      /repos\[0\]: gone does not exist/,
    );
    await expectRefused({ repos: ['../api'] }, /repos\[0\]: a folder relative to the workspace/);
    await expectRefused({ isolation: 'none' }, /repos: needs "isolation": "worktree"/);
    await expectRefused({ directives: ['rename fetchData to loadData in a.ts'] }, /directives\[0\]\.repo: required/);
    await expectRefused(
      { directives: [{ directive: 'x', repo: 'web' }] },
      /directives\[0\]\.repo: web is not one of the plan's repos \(api\)/,
    );
    await expectRefused({ repos: undefined }, /directives\[0\]\.repo: the plan has no repos/);
    mkdirSync(join(root, 'api', 'sub'));
    await expectRefused(
      { repos: ['api/sub'], directives: [{ directive: 'x', repo: 'api/sub' }] },
      /repos\[0\]: api\/sub is inside the git repository .*api, not its top/,
    );

    // --repo on review commands: a name the run does not have
    const ok = await run({});
    expect(ok.code, ok.stderr).toBe(0);
    const fanDir = fanOutOf(join(ok.dir, '.forkcache', 'runs'));
    // resume reads the run's repositories from its manifest: the finished fork stays on its branch
    const branch = branches(join(root, 'api'));
    const resumed = await forkcache(['resume', fanDir]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(branches(join(root, 'api'))).toEqual(branch);
    expect(branch).toHaveLength(1);
    for (const command of ['status', 'diff', 'merge', 'clean']) {
      const result = await forkcache([command, fanDir, '--repo', 'web']);
      expect(result.stderr).toMatch(/--repo: web is not a repository of .* \(its repos: api\)/);
      expect(result.code).toBe(2);
    }
    const pushBad = await forkcache(['push', fanDir, '--remote', 'nowhere']);
    expect(pushBad.stderr).toMatch(/has no remote named nowhere/);
    expect(pushBad.code).toBe(2);
  });
});
