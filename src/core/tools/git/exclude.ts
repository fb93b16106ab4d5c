import { appendFileSync, existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { execGit, gitEnv, NEUTRAL_CONFIG } from './git.ts';

/**
 * Keep what forkcache writes into a repository out of `git status`: its run directory
 * (`.forkcache/` for the default `.forkcache/runs`) and the plan file, in the repository's
 * `.git/info/exclude` — the clone's own ignore list, never a tracked `.gitignore`, so nothing
 * the repository shares changes. Each entry is appended once (a second run finds it); a path
 * outside the repository, or a plan file git already tracks, gets none. A directory in no
 * repository, or a git that cannot say where its git dir is, is left alone: this is a
 * convenience, never a reason to fail a run.
 *
 * Returns the entries it added.
 */
export async function excludeFromGit(
  paths: { runsDir?: string | undefined; planFile?: string | undefined },
  cwd: string,
): Promise<string[]> {
  const start = paths.runsDir ? nearestExisting(paths.runsDir) : cwd;
  let top: string;
  let common: string;
  try {
    const { stdout } = await execGit(['rev-parse', '--path-format=absolute', '--show-toplevel', '--git-common-dir'], {
      cwd: start,
      env: gitEnv(NEUTRAL_CONFIG),
    });
    [top, common] = stdout.trim().split('\n') as [string, string];
  } catch {
    return [];
  }
  const entries: string[] = [];
  const run = paths.runsDir && inside(top, paths.runsDir);
  // `.forkcache/` for the default `.forkcache/runs` (forkcache's own folder), else the run directory itself
  if (run) {
    const parts = run.split(sep);
    entries.push(`/${(parts[0] === FORKCACHE_DIR ? [FORKCACHE_DIR] : parts).join('/')}/`);
  }
  const plan = paths.planFile && inside(top, paths.planFile);
  if (plan && !(await tracked(top, plan))) entries.push(`/${plan.split(sep).join('/')}`);
  if (entries.length === 0) return [];
  const file = join(resolve(top, common), 'info', 'exclude');
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    // no exclude file yet: git creates one with its template, but need not
  }
  const have = new Set(text.split('\n').map((l) => l.trim()));
  const added = entries.filter((e) => !have.has(e));
  if (added.length === 0) return [];
  try {
    mkdirSync(dirname(file), { recursive: true });
    const lead = text === '' || text.endsWith('\n') ? '' : '\n';
    appendFileSync(file, `${lead}${text.includes(COMMENT) ? '' : `${COMMENT}\n`}${added.join('\n')}\n`);
  } catch {
    return [];
  }
  return added;
}

const FORKCACHE_DIR = '.forkcache';
const COMMENT = '# forkcache: its run directory and plan (added by forkcache run)';

/** `path` relative to `top` when it is inside it (and not `top` itself), else undefined. */
function inside(top: string, path: string): string | undefined {
  const rel = relative(top, resolve(path));
  return rel === '' || rel.startsWith('..') || isAbsolute(rel) ? undefined : rel;
}

/** The run directory may not exist yet: ask git from the nearest folder that does. */
function nearestExisting(path: string): string {
  let dir = resolve(path);
  for (;;) {
    if (existsSync(dir) && statSync(dir).isDirectory()) return dir;
    const up = dirname(dir);
    if (up === dir) return dir;
    dir = up;
  }
}

async function tracked(top: string, rel: string): Promise<boolean> {
  try {
    const { code } = await execGit(['ls-files', '--error-unmatch', '--', rel], {
      cwd: top,
      env: gitEnv(NEUTRAL_CONFIG),
      ok: [1],
    });
    return code === 0;
  } catch {
    return false;
  }
}
