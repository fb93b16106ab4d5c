import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// Issue 47: a fixed path under the temp directory (`<temp>/forkcache-locks`) is shared by every
// user of the machine, and whoever makes it first owns it. Every use of the temp directory in
// src/ is a fresh `mkdtemp` folder, or the per-user folder of src/core/tools/user-dir.ts, which
// checks who owns what it finds. A new fixed path fails here.

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

describe('no fixed path under the temp directory (issue 47)', () => {
  it('every tmpdir() in src/ is inside a mkdtemp call, or in the per-user folder', () => {
    const fixed: string[] = [];
    for (const file of sources(join(ROOT, 'src'))) {
      const name = relative(ROOT, file);
      if (name === 'src/core/tools/user-dir.ts') continue;
      readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (/\btmpdir\(\)/.test(line) && !/mkdtemp(Sync)?\(/.test(line))
            fixed.push(`${name}:${i + 1}: ${line.trim()}`);
        });
    }
    expect(fixed).toEqual([]);
  });
});
