import { ForkcacheError } from '../../util/errors.ts';
import { execFileText, pathOnlyEnv, whyFailed } from '../../util/exec-file.ts';

/*
 * The one way forkcache runs git on the host. A fork's worktree is written by an untrusted
 * model, and git runs programs named by configuration (fsmonitor, hooks, filters, diff and
 * merge drivers, pagers, editors, ssh, credential helpers, gpg): a `.git` the fork wrote, or a
 * config that an attribute the fork wrote selects, would run outside every sandbox with
 * forkcache's own environment and its API key. So every git command here gets:
 * - an environment built from an allowlist (no API key, no GIT_* of the caller), with the
 *   system and global configuration and the system attributes off and HOME pointed at nothing;
 * - configuration at command-line scope (it wins over every file) that turns off each key of
 *   git 2.39 that runs a program, plus the filter/diff/merge drivers the repository defines;
 * - inside a fork's worktree, GIT_DIR and GIT_WORK_TREE set explicitly (worktree-git.ts), so
 *   git never follows the `.git` the fork can write.
 */

/** Keys that run a program, each set to a value that runs none (`:` is git's "no editor"). */
export const NEUTRAL_CONFIG: ReadonlyArray<readonly [string, string]> = [
  ['core.fsmonitor', 'false'],
  ['core.hooksPath', '/dev/null'],
  ['core.pager', 'cat'],
  ['core.editor', ':'],
  ['sequence.editor', ':'],
  ['core.askPass', ''],
  ['core.sshCommand', 'false'],
  ['core.gitProxy', ''],
  ['core.alternateRefsCommand', ''],
  ['core.attributesFile', '/dev/null'],
  ['credential.helper', ''],
  ['diff.external', ''],
  ['gpg.program', 'false'],
  ['gpg.openpgp.program', 'false'],
  ['gpg.x509.program', 'false'],
  ['gpg.ssh.program', 'false'],
  ['gpg.ssh.defaultKeyCommand', ''],
  ['commit.gpgSign', 'false'],
  ['tag.gpgSign', 'false'],
  ['merge.verifySignatures', 'false'],
  ['log.showSignature', 'false'],
  // no transport at all: nothing here fetches or pushes, so ssh/http/ext helpers never start
  ['protocol.allow', 'never'],
  ['submodule.recurse', 'false'],
  ['diff.ignoreSubmodules', 'all'],
  ['status.submoduleSummary', 'false'],
  ['fetch.recurseSubmodules', 'false'],
  // `gc --auto` and maintenance would start more work (and hooks) behind a commit
  ['gc.auto', '0'],
  ['gc.autoDetach', 'false'],
  ['maintenance.auto', 'false'],
  ['rerere.enabled', 'false'],
  ['color.ui', 'false'],
  ['advice.detachedHead', 'false'],
  ['advice.addEmbeddedRepo', 'false'],
];

/** Per-driver keys that run a program, and what turns each off. */
const DRIVER_KEYS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  // an empty clean/smudge command is skipped; `required` would then make git die
  filter: { clean: '', smudge: '', process: '', required: 'false' },
  // diff commands also pass --no-ext-diff and --no-textconv; these are the second lock
  diff: { command: '', textconv: '' },
  // an empty merge command would "succeed" and keep ours: `false` reports a conflict instead
  merge: { driver: 'false' },
};

const DRIVER_KEY = /^(filter|diff|merge)\.(.+)\.([a-z]+)$/;

/**
 * Overrides for the drivers a repository's configuration defines (names from
 * `git config --list --name-only -z`): attributes in a worktree choose drivers by name, so
 * every defined one is turned off, whatever file defined it (includes too).
 */
export function driverOverrides(configNames: string): Array<readonly [string, string]> {
  const out: Array<readonly [string, string]> = [];
  const seen = new Set<string>();
  for (const name of configNames.split('\0')) {
    const match = DRIVER_KEY.exec(name.trim());
    if (!match) continue;
    const [, section, driver] = match as unknown as [string, string, string];
    if (seen.has(`${section}\0${driver}`)) continue;
    seen.add(`${section}\0${driver}`);
    for (const [key, value] of Object.entries(DRIVER_KEYS[section]!)) out.push([`${section}.${driver}.${key}`, value]);
  }
  return out;
}

/** The identity of the commits forkcache makes when it has no other (a CI box may have none). */
export const FORKCACHE_IDENT = { name: 'forkcache', email: 'forkcache@localhost' } as const;

export interface Ident {
  name: string;
  email: string;
}

/**
 * The environment of every git command: an allowlist, never the caller's environment. `extra`
 * adds what forkcache itself sets (GIT_DIR and GIT_WORK_TREE of a worktree).
 */
export function gitEnv(
  config: ReadonlyArray<readonly [string, string]>,
  extra: Record<string, string> = {},
  ident: Ident = FORKCACHE_IDENT,
): Record<string, string> {
  const env: Record<string, string> = {
    ...pathOnlyEnv(),
    HOME: '/dev/null',
    LC_ALL: 'C',
    LANG: 'C',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_ATTR_NOSYSTEM: '1',
    GIT_TERMINAL_PROMPT: '0',
    GIT_PAGER: 'cat',
    GIT_EDITOR: ':',
    GIT_AUTHOR_NAME: ident.name,
    GIT_AUTHOR_EMAIL: ident.email,
    GIT_COMMITTER_NAME: ident.name,
    GIT_COMMITTER_EMAIL: ident.email,
    GIT_CONFIG_COUNT: String(config.length),
  };
  if (process.env['TMPDIR']) env['TMPDIR'] = process.env['TMPDIR'];
  // key and value apart (not `-c k=v`): a driver name may hold any character, `=` included
  config.forEach(([key, value], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = key;
    env[`GIT_CONFIG_VALUE_${i}`] = value;
  });
  return { ...env, ...extra };
}

export interface GitResult {
  stdout: string;
  stderr: string;
  code: number;
}

interface GitCall {
  cwd: string;
  env: Record<string, string>;
  /** Exit codes that are answers, not failures (e.g. 1 for `merge-base --is-ancestor`). */
  ok?: readonly number[];
  /** Written to git's standard input (e.g. `update-ref --stdin`). */
  input?: string;
}

/** Run git once; a failure is a GIT_FAILED error naming the command and git's message. */
export async function execGit(args: readonly string[], call: GitCall): Promise<GitResult> {
  const r = await execFileText('git', ['--no-pager', ...args], { cwd: call.cwd, env: call.env, input: call.input });
  const code = r.code ?? -1;
  if (code === 0 || call.ok?.includes(code)) return { stdout: r.stdout, stderr: r.stderr, code };
  throw new ForkcacheError('GIT_FAILED', `git ${args.slice(0, 2).join(' ')} failed in ${call.cwd}: ${whyFailed(r)}`, {
    data: { args: [...args], code },
  });
}
