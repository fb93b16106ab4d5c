import { describe, expect, it } from 'vitest';
import { driverOverrides, execGit, gitEnv, NEUTRAL_CONFIG } from '../../../src/core/tools/git/git.ts';
import { git, repoWith } from './git-fixture.ts';
import { restoreEnv } from '../../helpers.ts';

describe('the hardened git runner', () => {
  it("passes git an allowlisted environment: no API key, none of the caller's GIT_* settings", async () => {
    const repo = repoWith({ 'a.ts': '1\n' });
    git(repo, 'config', 'core.fsmonitor', 'env > /tmp/pwn-local');
    const saved = { ...process.env };
    Object.assign(process.env, {
      ANTHROPIC_API_KEY: 'sk-ant-canary-env-0b5e',
      OPENAI_API_KEY: 'sk-canary-openai',
      GIT_DIR: '/nonexistent/evil',
      GIT_CONFIG_PARAMETERS: "'core.fsmonitor'='env > /tmp/pwn'",
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: 'core.pager',
      GIT_CONFIG_VALUE_0: 'evil-pager',
      GIT_SSH_COMMAND: 'evil-ssh',
    });
    try {
      const env = gitEnv(NEUTRAL_CONFIG);
      expect(Object.values(env).join('\n')).not.toMatch(/canary|evil|pwn/);
      expect(
        Object.keys(env)
          .filter((k) => k.startsWith('GIT_') && !/^GIT_CONFIG_(KEY|VALUE)_\d+$/.test(k))
          .sort(),
      ).toEqual([
        'GIT_ATTR_NOSYSTEM',
        'GIT_AUTHOR_EMAIL',
        'GIT_AUTHOR_NAME',
        'GIT_COMMITTER_EMAIL',
        'GIT_COMMITTER_NAME',
        'GIT_CONFIG_COUNT',
        'GIT_CONFIG_GLOBAL',
        'GIT_CONFIG_NOSYSTEM',
        'GIT_EDITOR',
        'GIT_PAGER',
        'GIT_TERMINAL_PROMPT',
      ]);
      expect(env['HOME']).toBe('/dev/null');
      // what git itself then sees: the neutral values at command scope win over the repository's
      const { stdout } = await execGit(['config', '--show-scope', '--get-all', 'core.fsmonitor'], { cwd: repo, env });
      expect(stdout.trim().split('\n')).toEqual(['local\tenv > /tmp/pwn-local', 'command\tfalse']);
      expect((await execGit(['config', '--get', 'core.fsmonitor'], { cwd: repo, env })).stdout.trim()).toBe('false');
      const pager = await execGit(['config', '--get', 'core.pager'], { cwd: repo, env });
      expect(pager.stdout.trim()).toBe('cat');
    } finally {
      restoreEnv(saved);
    }
  });

  it("turns off every filter, diff and merge driver a repository's config defines, whatever its name", () => {
    const names = [
      'core.bare',
      'filter.lfs.clean',
      'filter.lfs.process',
      'diff.a=b.c.textconv',
      'merge.ours.driver',
      '',
    ];
    expect(driverOverrides(names.join('\0'))).toEqual([
      ['filter.lfs.clean', ''],
      ['filter.lfs.smudge', ''],
      ['filter.lfs.process', ''],
      ['filter.lfs.required', 'false'],
      ['diff.a=b.c.command', ''],
      ['diff.a=b.c.textconv', ''],
      ['merge.ours.driver', 'false'],
    ]);
  });
});
