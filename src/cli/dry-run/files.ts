import { readdirSync, readFileSync, statSync } from 'node:fs';
import { isAbsolute, join, normalize, relative, sep } from 'node:path';

/**
 * What a dry run knows of the files forks will read, without running them: the files a
 * directive names (a plan made from a glob names one per directive), their sizes, and a
 * sample of their text to count tokens per character on.
 */

export interface NamedFile {
  path: string;
  bytes: number;
  chars: number;
}

/** The words of a directive that name a regular file inside the workspace. */
export function filesNamedBy(directive: string, workspace: string, cache: Map<string, NamedFile | null>): NamedFile[] {
  const found = new Map<string, NamedFile>();
  for (const raw of directive.split(/\s+/)) {
    const word = raw.replace(/^[`'"(<[]+|[`'")>\]:;,.!?]+$/g, '');
    if (word === '' || isAbsolute(word) || !/[./]/.test(word)) continue;
    const path = normalize(word);
    if (path.startsWith('..') || path.split(sep).includes('.git')) continue;
    if (!cache.has(path)) cache.set(path, fileAt(workspace, path));
    const file = cache.get(path);
    if (file) found.set(file.path, file);
  }
  return [...found.values()];
}

function fileAt(workspace: string, path: string): NamedFile | null {
  try {
    const full = join(workspace, path);
    if (relative(workspace, full).startsWith('..')) return null;
    const stat = statSync(full);
    if (!stat.isFile()) return null;
    // characters, not bytes, are what tokens are counted on (UTF-8 text: most code is ASCII)
    const chars = stat.size <= 8 * 1024 * 1024 ? readFileSync(full, 'utf8').length : stat.size;
    return { path, bytes: stat.size, chars };
  } catch {
    return null;
  }
}

/** The median size of the workspace's files (at most `limit` looked at; dot folders and node_modules skipped). */
export function medianWorkspaceFile(workspace: string, limit = 5_000): NamedFile | undefined {
  const sizes: NamedFile[] = [];
  const walk = (dir: string): void => {
    let entries;
    try {
      entries = readdirSync(join(workspace, dir), { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      if (sizes.length >= limit || e.name.startsWith('.') || e.name === 'node_modules') continue;
      const path = dir === '' ? e.name : `${dir}/${e.name}`;
      if (e.isDirectory()) walk(path);
      else if (e.isFile()) {
        const file = fileAt(workspace, path);
        if (file && file.bytes > 0) sizes.push(file);
      }
    }
  };
  walk('');
  sizes.sort((a, b) => a.bytes - b.bytes);
  return sizes[Math.floor(sizes.length / 2)];
}

/** Up to `max` characters of text from the files, a slice of each in turn: what tokens per character is counted on. */
export function textSample(workspace: string, files: readonly NamedFile[], max = 96 * 1024): string {
  const unique = [...new Map(files.map((f) => [f.path, f])).values()].slice(0, 64);
  const each = Math.max(1024, Math.floor(max / Math.max(1, unique.length)));
  let sample = '';
  for (const f of unique) {
    if (sample.length >= max) break;
    try {
      sample += readFileSync(join(workspace, f.path), 'utf8').slice(0, each);
    } catch {
      // a file that vanished since it was named: the others are sample enough
    }
  }
  return sample.slice(0, max);
}
