import { chmodSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writePlan } from '../cli/review-fixture.ts';
import { forkcache } from '../cli/run-cli.ts';
import { git, repoWith } from '../core/tools/git-fixture.ts';

/*
 * The user's own repository configures programs git runs: fsmonitor, hooks (in .git/hooks and
 * in a hooksPath), filter, diff and merge drivers selected by a committed .gitattributes, an
 * external diff, pager, editor, gpg signing, ssh, credential and askpass helpers, some through
 * an included file. forkcache's git, on the host with the API key, runs none of them: not for
 * the worktrees, nor for status, diff, merge or clean.
 */
const HOOKS = [
  'pre-commit',
  'commit-msg',
  'post-commit',
  'post-checkout',
  'post-merge',
  'pre-merge-commit',
  'reference-transaction',
  'post-index-change',
  'post-rewrite',
  'pre-auto-gc',
  'prepare-commit-msg',
];

function hostileConfig(repo: string, marks: string): void {
  const run = (name: string): string => `sh -c 'env > ${marks}/${name}' --`;
  const hookDirs = [join(repo, '.git', 'hooks'), mkdtempSync(join(tmpdir(), 'fc-hooks-'))];
  for (const dir of hookDirs)
    for (const hook of HOOKS) {
      writeFileSync(join(dir, hook), `#!/bin/sh\nenv > ${marks}/hook-${hook}\n`);
      chmodSync(join(dir, hook), 0o755);
    }
  const included = join(dirname(repo), `${repo.split('/').at(-1)}-included.config`);
  writeFileSync(
    included,
    `[filter "inc"]\n\tclean = ${run('inc-clean')}\n\tsmudge = ${run('inc-smudge')}\n\trequired = true\n`,
  );
  const set = (key: string, value: string): void => void git(repo, 'config', key, value);
  set('core.fsmonitor', run('fsmonitor'));
  set('core.hooksPath', hookDirs[1]!);
  for (const part of ['clean', 'smudge', 'process']) set(`filter.evil.${part}`, run(`filter-${part}`));
  set('filter.evil.required', 'true');
  set('diff.evil.textconv', run('textconv'));
  set('diff.evil.command', run('diff-command'));
  set('merge.evil.driver', run('merge-driver'));
  set('diff.external', run('diff-external'));
  set('core.pager', run('pager'));
  set('core.editor', run('editor'));
  set('sequence.editor', run('sequence-editor'));
  set('gpg.program', run('gpg'));
  set('commit.gpgSign', 'true');
  set('core.sshCommand', run('ssh'));
  set('credential.helper', `!${run('credential')}`);
  set('core.askPass', run('askpass'));
  set('include.path', included);
}

describe("host-side git never runs the repository's configured programs", () => {
  it('a worktree run, status, diff, merge and clean run none of them', async () => {
    const repo = repoWith({
      '.gitattributes': '* filter=evil diff=evil merge=evil\n*.ts filter=inc\n',
      'src/a.ts': 'export const fetchData = 1;\n',
      'src/b.ts': 'export const parseThing = 2;\n',
    });
    const marks = mkdtempSync(join(tmpdir(), 'fc-marks-'));
    hostileConfig(repo, marks);
    const plan = writePlan(
      repo,
      ['rename fetchData to loadData in src/a.ts', 'rename parseThing to parseItem in src/b.ts'],
      {
        isolation: 'worktree',
      },
    );
    const runs = join(dirname(plan), 'runs');
    await forkcache(['run', plan, '--json']);
    expect(readdirSync(marks), 'after forkcache run').toEqual([]);
    const dir = join(runs, readdirSync(runs)[0]!);
    for (const step of [
      ['status', dir],
      ['diff', dir],
      ['merge', dir],
      ['clean', dir],
    ]) {
      const result = await forkcache(step);
      expect(result.code, `${step[0]}: ${result.stderr}`).toBe(0);
      expect(readdirSync(marks), `after forkcache ${step[0]}`).toEqual([]);
    }
    // the merge happened, through none of the drivers
    expect(git(repo, 'show', 'HEAD:src/a.ts')).toBe('export const loadData = 1;');
    expect(git(repo, 'show', 'HEAD:src/b.ts')).toBe('export const parseItem = 2;');
    expect(readFileSync(join(repo, 'src/b.ts'), 'utf8')).toBe('export const parseItem = 2;\n');
    expect(git(repo, 'worktree', 'list', '--porcelain').match(/^worktree /gm)).toHaveLength(1);
    // the control: plain git in that repository does run them
    git(repo, 'status');
    expect(readdirSync(marks)).toContain('fsmonitor');
  });
});
