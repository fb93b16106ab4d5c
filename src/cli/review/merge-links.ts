import { posix } from 'node:path';
import type { HostGit } from '../../core/tools/git/host-git.ts';

const SYMLINK = '120000';
const GITLINK = '160000';

/**
 * What a fork's commit brings in that `merge` refuses (issue 33): a gitlink (a submodule entry:
 * a commit of another repository, checked out by the next `git submodule update`), and a
 * symbolic link whose target leaves the repository (absolute, climbing above its root, or into
 * `.git`). Either points the user's own tools at a place no fork should choose. Read from git's
 * objects only: the fork's worktree is not looked at.
 */
export async function linksLeaving(repo: HostGit, base: string, commit: string): Promise<string[]> {
  const { stdout } = await repo.run(['diff-tree', '-r', '-z', '--no-renames', '--no-commit-id', base, commit]);
  const fields = stdout.split('\0');
  const found: string[] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const [, , mode, , blob, status] = /^:(\d+) (\d+) ([0-9a-f]+) ([0-9a-f]+) (\w)/.exec(fields[i]!) ?? [];
    const path = fields[i + 1]!;
    if (!mode || status === 'D') continue;
    if (mode === GITLINK) found.push(`${path} (a gitlink to ${blob!.slice(0, 10)})`);
    if (mode !== SYMLINK) continue;
    const target = (await repo.run(['cat-file', 'blob', blob!])).stdout;
    const resolved = posix.normalize(posix.join(posix.dirname(path), target));
    if (
      posix.isAbsolute(target) ||
      resolved === '..' ||
      resolved.startsWith('../') ||
      resolved === '.git' ||
      resolved.startsWith('.git/')
    )
      found.push(`${path} (a symlink to ${JSON.stringify(target.slice(0, 200))})`);
  }
  return found;
}
