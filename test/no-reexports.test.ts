import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = fileURLToPath(new URL('../src/', import.meta.url));
// the public entries re-export by name on purpose: that list is the API (test/public-api.test.ts)
const ENTRIES = new Set(['index.ts', 'testing.ts', 'ai-sdk.ts']);

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

describe('imports', () => {
  it('name the file that declares what they import: no module but the entries re-exports', () => {
    const reexports = sources(SRC)
      .filter((file) => !ENTRIES.has(relative(SRC, file)))
      .flatMap((file) =>
        readFileSync(file, 'utf8')
          .split('\n')
          .map((line, i) => ({ line, at: `src/${relative(SRC, file)}:${i + 1}` }))
          .filter(({ line }) => /^export\s+(type\s+)?(\*|\{[^}]*\})\s*from\s/.test(line))
          .map(({ at }) => at),
      );
    expect(reexports).toEqual([]);
  });
});
