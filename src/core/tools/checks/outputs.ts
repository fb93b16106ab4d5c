import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { ProtectedPaths } from '../jail/protected-paths.ts';

/**
 * What the plan's check wrote into a fork's worktree, so the fork's commit leaves it out
 * (issue 42: `python3 -m py_compile {file}` put 256 `__pycache__/*.pyc` into the fork branches,
 * the merge commit and the pushed branch).
 *
 * The rule: an entry the check *created* (absent before it ran, present after) is the check's,
 * unless the fork changes it afterwards (its tools, bash included, ran between two checks: a
 * change seen then is the fork's work). A file that was there before the check and that the check
 * changed is kept: it may be the fork's own file, formatted by the check (`gofmt -w {file}`), and
 * the two cannot be told apart. A directory the check created is one entry (`__pycache__/`), not
 * its files, so `npm install` as a check is one pathspec at commit time, not thousands.
 *
 * By snapshots of the workspace (path → inode, size, times), not by tracking the tools: bash's
 * changes are the fork's, and only a snapshot sees them.
 */
export class CheckOutputs {
  readonly #root: string;
  readonly #protected: ProtectedPaths;
  /** The workspace after the last check, to see what the fork changed since. */
  #last: Map<string, string> | undefined;
  /** The entries the checks created and the fork has not changed since: `dir/` for a directory. */
  readonly #made = new Set<string>();

  /** `root`: the workspace's realpath; `protect`: what no tool reaches there (never listed). */
  constructor(root: string, protect: ProtectedPaths) {
    this.#root = root;
    this.#protected = protect;
  }

  /** Run `check` between two snapshots; the entries the checks made so far, sorted. */
  async around<T>(check: () => Promise<T>): Promise<{ result: T; outputs: string[] }> {
    const before = await this.#snapshot();
    if (this.#last) this.#claim(changed(this.#last, before));
    const result = await check();
    const after = await this.#snapshot();
    for (const entry of createdTops(before, after)) this.#made.add(entry);
    this.#last = after;
    return { result, outputs: [...this.#made].sort() };
  }

  /** The fork changed these since the last check: whatever of them a check made is the fork's now. */
  #claim(paths: readonly string[]): void {
    for (const made of [...this.#made]) {
      const claimed = made.endsWith('/')
        ? paths.some((p) => p === made.slice(0, -1) || p.startsWith(made))
        : paths.includes(made);
      if (claimed) this.#made.delete(made);
    }
  }

  /** Every entry under the root but the protected ones (`.git`, forkcache's directories), by relative path. */
  async #snapshot(): Promise<Map<string, string>> {
    const seen = new Map<string, string>();
    const walk = async (dir: string, rel: string): Promise<void> => {
      let names: string[];
      try {
        names = await readdir(dir);
      } catch {
        return; // removed while walking, or unreadable: nothing to list
      }
      for (const name of names) {
        const path = join(dir, name);
        const relPath = rel === '' ? name : `${rel}/${name}`;
        if (this.#protected.reason(this.#root, path) !== undefined) continue;
        try {
          const st = await lstat(path, { bigint: true });
          if (st.isDirectory()) {
            seen.set(relPath, 'd');
            await walk(path, relPath);
          } else seen.set(relPath, `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`);
        } catch {
          // gone between readdir and lstat
        }
      }
    };
    await walk(this.#root, '');
    return seen;
  }
}

/** Entries added, removed or changed between two snapshots. */
function changed(from: ReadonlyMap<string, string>, to: ReadonlyMap<string, string>): string[] {
  const out: string[] = [];
  for (const [path, sig] of to) if (from.get(path) !== sig && !(sig === 'd' && from.get(path) === 'd')) out.push(path);
  for (const path of from.keys()) if (!to.has(path)) out.push(path);
  return out;
}

/** The topmost entries present `after` and absent `before` (a new directory stands for what it holds). */
function createdTops(before: ReadonlyMap<string, string>, after: ReadonlyMap<string, string>): string[] {
  const out: string[] = [];
  for (const [path, sig] of after) {
    if (before.has(path)) continue;
    const slash = path.lastIndexOf('/');
    if (slash >= 0 && !before.has(path.slice(0, slash))) continue; // its directory is new too
    out.push(sig === 'd' ? `${path}/` : path);
  }
  return out;
}
