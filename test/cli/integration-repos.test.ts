import { describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, renameSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LEFT_OUT_EXIT_CODE } from '../../src/cli/exit-codes.ts';
import { git, repoWith } from '../core/tools/git-fixture.ts';
import { runDirOf, writePlan } from './review-fixture.ts';
import { forkcache, lastJson } from './run-cli.ts';

// Issue 42: the integration step of a plan over several repositories (`repos`): each
// repository gets its own integration branch and check, from one command for all or a map by
// repository; a repository the map leaves out is not integrated, is said so, and its forks
// merge as a run without an integration check merges them; the exit codes combine.

const CHECK = '! grep -rl --exclude-dir=.forkcache-home BROKEN .';
const rename = (repo: string, file: string) => ({ directive: `rename alpha to beta in ${file}`, file, repo });
const breaker = (repo: string) => ({ directive: 'run `echo BROKEN > bad.txt` and report', repo });

/** Three repositories under one folder: api, web, cli. */
function threeRepos(): string {
  const root = mkdtempSync(join(tmpdir(), 'fc-irepos-'));
  const made = {
    api: repoWith({ 'a.txt': 'alpha one\n', 'b.txt': 'alpha two\n' }),
    web: repoWith({ 'c.txt': 'alpha three\n' }),
    cli: repoWith({ 'd.txt': 'alpha four\n' }),
  };
  for (const [name, dir] of Object.entries(made)) renameSync(dir, join(root, name));
  return root;
}

function plan(root: string, directives: unknown[], integrationCheck: unknown): string {
  return writePlan(root, directives as never, {
    repos: ['api', 'web', 'cli'],
    isolation: 'worktree',
    allow: ['read_file', 'edit_file', 'write_file', 'bash'],
    sandbox: 'none',
    integrationCheck,
    integrationRounds: 1,
  });
}

const branches = (repo: string): string[] =>
  git(repo, 'for-each-ref', '--format=%(refname:short)', 'refs/heads/forkcache/').split('\n').filter(Boolean);

describe('integration over several repositories (issue 42)', () => {
  it('one command: each repository its own integration branch and check; every fork integrated, exit 0', async () => {
    const root = threeRepos();
    const planPath = plan(root, [rename('api', 'a.txt'), rename('web', 'c.txt'), rename('cli', 'd.txt')], CHECK);
    const ran = await forkcache(['run', planPath, '--json']);
    expect(ran.code).toBe(0);
    const integration = lastJson(ran.stdout)['integration'];
    expect(integration).toMatchObject({ integrated: 3, left_out: 0, passed: true, check_runs: 3 });
    const fanOutId = runDirOf(planPath).split('/').at(-1)!;
    const repos = integration['repos'] as Array<Record<string, any>>;
    expect(repos.map((r) => [r['repo'], r['branch'], r['check_runs'], r['passed']])).toEqual(
      ['api', 'web', 'cli'].map((name) => [name, `forkcache/${fanOutId}-${name}-integration`, 1, true]),
    );
    // each repository's branch is in that repository, and holds that repository's fork
    expect(git(join(root, 'web'), 'show', `forkcache/${fanOutId}-web-integration:c.txt`)).toBe('beta three');
    expect(branches(join(root, 'api'))).not.toContain(`forkcache/${fanOutId}-web-integration`);
  });

  it('a map: a repository left out of it is not integrated and said so; one green, one with a left-out fork: 4 from run and merge', async () => {
    const root = threeRepos();
    const planPath = plan(
      root,
      [rename('api', 'a.txt'), rename('api', 'b.txt'), rename('web', 'c.txt'), breaker('web'), rename('cli', 'd.txt')],
      { api: CHECK, web: CHECK },
    );
    const ran = await forkcache(['run', planPath, '--json']);
    expect(ran.code).toBe(LEFT_OUT_EXIT_CODE);
    const json = lastJson(ran.stdout);
    const integration = json['integration'];
    expect(integration).toMatchObject({ integrated: 3, left_out: 1, passed: true });
    const repos = integration['repos'] as Array<Record<string, any>>;
    expect(repos.map((r) => r['repo'])).toEqual(['api', 'web']);
    expect(repos[1]!['forks'].find((f: { status: string }) => f.status === 'left_out')).toMatchObject({
      fork_id: expect.stringMatching(/-f04$/),
    });
    // cli: not integrated, and the run says so
    expect(integration['not_integrated']).toEqual([{ repo: 'cli', why: 'integrationCheck has no command for it' }]);
    expect(ran.stderr).toMatch(/integration of cli: not integrated \(integrationCheck has no command for it\)/);
    const fanOutId = runDirOf(planPath).split('/').at(-1)!;
    expect(branches(join(root, 'cli')).filter((b) => b.endsWith('-integration'))).toEqual([]);
    // cli's fork keeps its own status; api's and web's carry their integration status
    expect(json['fork_results'].map((f: { status: string }) => f.status)).toEqual([
      'integrated',
      'integrated',
      'integrated',
      'left_out',
      'completed',
    ]);
    expect(branches(join(root, 'web'))).toContain(`forkcache/${fanOutId}-web-integration`);

    // merge: api's and web's integrated forks, and cli's completed one (no check decides there)
    const merged = await forkcache(['merge', runDirOf(planPath), '--json']);
    expect(merged.code).toBe(LEFT_OUT_EXIT_CODE);
    expect(readFileSync(join(root, 'api', 'b.txt'), 'utf8')).toBe('beta two\n');
    expect(readFileSync(join(root, 'web', 'c.txt'), 'utf8')).toBe('beta three\n');
    expect(existsSync(join(root, 'web', 'bad.txt'))).toBe(false);
    expect(readFileSync(join(root, 'cli', 'd.txt'), 'utf8')).toBe('beta four\n');
  });
});
