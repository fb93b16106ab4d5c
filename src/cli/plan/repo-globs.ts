import { readdirSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { ForkcacheError } from '../../core/util/errors.ts';
import { compileGlob, type GlobMatcher } from '../../core/tools/files/glob-match.ts';

const GLOB_SPECIAL = /[*?[{\\]/;

const bad = (message: string): ForkcacheError =>
  new ForkcacheError('INVALID_FLAG', `--repos: ${message}`, { data: { field: '--repos' } });

/** The folders one segment-wise glob names (`DIR/*`, `work/{api,web}`): directories only, never through a symlink's target listing. */
function expandGlob(pattern: string): string[] {
  if (pattern.split('/').includes('**')) throw bad(`${pattern}: ** is not taken here; name the folders' level (DIR/*)`);
  const absolute = path.isAbsolute(pattern);
  let dirs = [absolute ? path.sep : '.'];
  for (const segment of pattern.split('/').filter((s) => s !== '' && s !== '.')) {
    if (!GLOB_SPECIAL.test(segment)) {
      dirs = dirs.map((d) => path.join(d, segment));
      continue;
    }
    let re: GlobMatcher;
    try {
      re = compileGlob(segment);
    } catch (err) {
      throw bad(`${pattern}: ${(err as Error).message}`);
    }
    dirs = dirs.flatMap((dir) => {
      let names: string[];
      try {
        names = readdirSync(dir).sort();
      } catch {
        return [];
      }
      // a leading dot is named, not matched: `*` does not bring in `.git` or `.cache`
      return names
        .filter((n) => re.test(n) && (!n.startsWith('.') || segment.startsWith('.')))
        .map((n) => path.join(dir, n));
    });
  }
  return dirs.filter((d) => statSync(d, { throwIfNoEntry: false })?.isDirectory());
}

/**
 * `--repos`: each value a folder, a comma-separated list of them, or a glob of folders
 * (`DIR/*`), relative to the current directory. The folders in the order given (a glob's
 * sorted), as real paths; a glob that names no folder, a folder that does not exist and the
 * same folder twice are bad input. Whether each is a git work tree is checked by the engine's
 * rule when the plan is made (`openRepos`).
 */
export function expandRepos(values: readonly string[]): string[] {
  const out: string[] = [];
  const seen = new Map<string, string>();
  for (const entry of values.flatMap((v) => v.split(',')).map((v) => v.trim())) {
    if (entry === '') continue;
    const dirs = GLOB_SPECIAL.test(entry) ? expandGlob(entry) : [entry];
    if (dirs.length === 0) throw bad(`${entry} names no folder`);
    for (const dir of dirs) {
      const kind = statSync(dir, { throwIfNoEntry: false });
      if (!kind) throw bad(`${dir} does not exist`);
      if (!kind.isDirectory()) throw bad(`${dir} is not a directory`);
      const real = realpathSync(dir);
      const first = seen.get(real);
      if (first !== undefined) throw bad(`${dir} is named twice (also as ${first})`);
      seen.set(real, dir);
      out.push(real);
    }
  }
  if (out.length === 0) throw bad('expected at least one repository folder');
  return out;
}

/**
 * The folder holding every repository (the plan's workspace) and each one's name relative to
 * it. Never a repository itself: with one repository, or one inside another, it is the parent.
 */
export function commonRoot(dirs: readonly string[]): { root: string; names: string[] } {
  let root = dirs[0]!;
  while (!dirs.every((d) => d === root || d.startsWith(root.endsWith(path.sep) ? root : root + path.sep)))
    root = path.dirname(root);
  if (dirs.includes(root)) root = path.dirname(root);
  return { root, names: dirs.map((d) => path.relative(root, d).split(path.sep).join('/')) };
}
