import { realpathSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { z } from 'zod';
import { ForkcacheError } from '../../util/errors.ts';
import { HostGit } from '../../tools/git/host-git.ts';

/** The directive field that names a fork's repository in a plan over several. */
export const REPO_FIELD = 'repo';

/**
 * A repository's name in a plan: its folder relative to the workspace, plain segments only
 * (no `..`, no absolute path), so that it names a folder under the workspace and nothing else.
 */
export const repoNameSchema = z
  .string()
  .min(1)
  .refine(
    (name) => name.split('/').every((s) => /^[A-Za-z0-9._][A-Za-z0-9._-]*$/.test(s) && s !== '.' && s !== '..'),
    'a folder relative to the workspace: names of letters, digits, ".", "_" and "-" joined by "/", no ".."',
  );

const bad = (field: string, message: string): ForkcacheError =>
  new ForkcacheError('INVALID_OPTION', `${field}: ${message}`, { data: { field } });

/** The names are distinct and need worktrees (each fork's branch lives in its own repository). */
export function assertRepoNames(repos: readonly string[], isolation: string | undefined): void {
  if (isolation !== 'worktree')
    throw bad(
      'repos',
      'needs "isolation": "worktree" (the forks of several repositories are reviewed, merged and pushed by their branches, each in its own repository)',
    );
  repos.forEach((name, i) => {
    const first = repos.indexOf(name);
    if (first !== i) throw bad(`repos[${i}]`, `${name} is listed twice (repos[${first}])`);
  });
}

/** Every fork names one of the plan's repositories in its `repo` field. */
export function assertForkRepos(
  repos: readonly string[],
  fields: readonly (Readonly<Record<string, string>> | undefined)[],
): void {
  fields.forEach((f, i) => {
    const name = f?.[REPO_FIELD];
    if (name === undefined)
      throw bad(`directives[${i}].${REPO_FIELD}`, `required: the plan has repos (${repos.join(', ')})`);
    if (!repos.includes(name))
      throw bad(`directives[${i}].${REPO_FIELD}`, `${name} is not one of the plan's repos (${repos.join(', ')})`);
  });
}

/**
 * Open each repository of a plan over several, in order: a folder under the workspace that is
 * the top of a git work tree with a commit, and no two the same repository (a symlink, a path
 * spelled two ways). Bad input names the entry: `repos[1]: web is not a git work tree …`.
 */
export async function openRepos(workspace: string, repos: readonly string[]): Promise<Map<string, HostGit>> {
  const opened = new Map<string, HostGit>();
  const tops = new Map<string, number>();
  for (const [i, name] of repos.entries()) {
    const field = `repos[${i}]`;
    const dir = resolve(workspace, name);
    const kind = statSync(dir, { throwIfNoEntry: false });
    if (!kind) throw bad(field, `${name} does not exist (under ${workspace})`);
    if (!kind.isDirectory()) throw bad(field, `${name} is not a directory`);
    const repo = await HostGit.open(dir, 'INVALID_OPTION').catch(() => {
      throw bad(field, `${name} is not a git work tree with a commit`);
    });
    if (realpathSync(repo.top) !== realpathSync(dir))
      throw bad(field, `${name} is inside the git repository ${repo.top}, not its top: name that folder`);
    const same = tops.get(repo.commonDir);
    if (same !== undefined) throw bad(field, `${name} is the same repository as repos[${same}] (${repos[same]})`);
    tops.set(repo.commonDir, i);
    opened.set(name, repo);
  }
  return opened;
}
