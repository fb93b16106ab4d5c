import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ForkcacheError } from './errors.ts';

/** The forkcache package's root directory (works from src/ and from dist/src/). */
export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'forkcache')
      return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new ForkcacheError('INTERNAL', 'forkcache: cannot find the package root');
    dir = parent;
  }
}
