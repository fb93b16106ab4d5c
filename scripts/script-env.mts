import { execFileSync } from 'node:child_process';

/**
 * The environment the refactor scripts run forkcache and git in: no user or system git
 * configuration, a fixed author, no colour, and no API key (the embedded emulator answers).
 */
export const SCRIPT_ENV: NodeJS.ProcessEnv = {
  ...process.env,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'check',
  GIT_AUTHOR_EMAIL: 'check@localhost',
  GIT_COMMITTER_NAME: 'check',
  GIT_COMMITTER_EMAIL: 'check@localhost',
  NO_COLOR: '1',
};
delete SCRIPT_ENV['ANTHROPIC_API_KEY'];

/** `git -C repo …` in that environment, its output trimmed. */
export const git = (repo: string, ...args: string[]): string =>
  execFileSync('git', ['-C', repo, ...args], { env: SCRIPT_ENV, encoding: 'utf8', maxBuffer: 1 << 28 }).trim();
