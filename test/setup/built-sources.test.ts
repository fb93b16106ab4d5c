import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { builtSources } from './built-sources.ts';

// The suite's processes run this build instead of the sources: a build of other sources must
// never be used. A tiny package whose module imports a sibling by its `.ts` name.
function tinyPackage(): string {
  const root = mkdtempSync(join(tmpdir(), 'fc-build-'));
  mkdirSync(join(root, 'src'));
  mkdirSync(join(root, 'workers'));
  writeFileSync(join(root, 'package.json'), '{ "name": "tiny", "type": "module" }\n');
  writeFileSync(join(root, 'src/main.ts'), "import { word } from './word.ts';\nconsole.log(word satisfies string);\n");
  writeFileSync(join(root, 'src/word.ts'), "export const word: string = 'first';\n");
  writeFileSync(join(root, 'workers/w.ts'), 'export default (): number => 1;\n');
  return root;
}

const run = (file: string): string => spawnSync(process.execPath, [file], { encoding: 'utf8' }).stdout.trim();

describe('the build of the sources for the suite', () => {
  it('runs as plain JavaScript, and an edited source gets a new build, never the old one', async () => {
    const root = tinyPackage();
    const first = await builtSources(root);
    expect(run(join(first, 'src/main.js'))).toBe('first');
    expect(await builtSources(root)).toBe(first); // the same content: the same folder, not rebuilt

    writeFileSync(join(root, 'src/word.ts'), "export const word: string = 'second';\n");
    const second = await builtSources(root);
    expect(second).not.toBe(first);
    expect(run(join(second, 'src/main.js'))).toBe('second');
  });
});
