import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ForkEngine } from '../../../src/core/engine/engine.ts';

const IDENT = { GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' };

const gitEnv = (): NodeJS.ProcessEnv => ({
  ...process.env,
  ...IDENT,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
});

/** Plain git for the test's own setup (the user's side): never the code under test. */
export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-C', cwd, ...args], { env: gitEnv() })
    .toString()
    .trim();
}

/** A temp git repository on `main` with `files` committed. */
export function repoWith(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'fc-repo-'));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  // one start, not three: each start forks this process (tens of ms in a large test process)
  execFileSync('sh', ['-c', 'git init --quiet -b main && git add -A && git commit --quiet -m base'], {
    cwd: dir,
    env: gitEnv(),
  });
  return dir;
}

/**
 * A `git` on PATH that logs `begin`/`end` around each `git worktree add` (then runs the real
 * git): two creations overlapped when a `begin` follows a `begin`.
 */
export function loggingGit(): { bin: string; log: string } {
  const bin = mkdtempSync(join(tmpdir(), 'fc-gitbin-'));
  const log = join(bin, 'calls.log');
  const real = execFileSync('sh', ['-c', 'command -v git']).toString().trim();
  writeFileSync(
    join(bin, 'git'),
    [
      '#!/bin/sh',
      'case " $* " in',
      `  *" worktree add "*) echo "begin $$" >> '${log}'; '${real}' "$@"; rc=$?; echo "end $$" >> '${log}'; exit $rc;;`,
      'esac',
      `exec '${real}' "$@"`,
      '',
    ].join('\n'),
  );
  chmodSync(join(bin, 'git'), 0o755);
  writeFileSync(log, '');
  return { bin, log };
}

/** An engine whose forks work in worktrees of `repo` (on the emulator at `baseURL`), closed after `work`. */
export async function withWorktreeEngine<T>(
  baseURL: string,
  repo: string,
  runDir: string,
  work: (engine: ForkEngine) => Promise<T>,
): Promise<T> {
  const engine = await ForkEngine.create({
    baseURL,
    apiKey: 'test',
    workspace: repo,
    runDir,
    isolation: 'worktree',
    pool: { maxThreads: 2 },
  });
  try {
    return await work(engine);
  } finally {
    await engine.close();
  }
}
