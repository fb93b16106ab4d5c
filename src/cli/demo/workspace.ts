import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packageRoot } from '../../core/util/package-root.ts';

export const DEMO_OLD_NAME = 'fetchData';
export const DEMO_NEW_NAME = 'loadData';
const FEATURES = join('src', 'features');

/**
 * Copy the sample repository into a new temporary directory, with exactly `forks` files that
 * use `fetchData` (the demo forks one child per file): surplus feature files are removed,
 * missing ones are generated from the first feature.
 */
export function prepareDemoWorkspace(forks: number): string {
  const dir = mkdtempSync(join(tmpdir(), 'forkcache-demo-'));
  cpSync(join(packageRoot(), 'examples', 'sample-repo'), dir, { recursive: true });
  const features = readdirSync(join(dir, FEATURES)).sort();
  const wanted = forks - 1; // src/lib/http.ts uses the name too
  const template = readFileSync(join(dir, FEATURES, features[0]!), 'utf8');
  for (const extra of features.slice(Math.max(0, wanted))) rmSync(join(dir, FEATURES, extra));
  for (let i = features.length; i < wanted; i++) {
    const name = `feature-${String(i + 1).padStart(3, '0')}`;
    writeFileSync(join(dir, FEATURES, `${name}.ts`), template.replaceAll('/users', `/${name}`));
  }
  return dir;
}

/** Files under src/ that still mention a name (what the demo checks at the end). */
export function filesMentioning(dir: string, name: string): string[] {
  const out: string[] = [];
  const walk = (rel: string): void => {
    for (const entry of readdirSync(join(dir, rel), { withFileTypes: true })) {
      const path = join(rel, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (readFileSync(join(dir, path), 'utf8').includes(name)) out.push(path);
    }
  };
  walk('src');
  return out.sort();
}
