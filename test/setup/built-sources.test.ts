import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { builtSources, CLI_BUNDLE, CLI_BUNDLE_MAIN, files } from './built-sources.ts';

const ROOT = join(import.meta.dirname, '..', '..');

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
  it('runs as plain JavaScript, and an edited source or tsconfig.json gets a new build, never the old one', async () => {
    const root = tinyPackage();
    const first = await builtSources(root);
    expect(run(join(first, 'src/main.js'))).toBe('first');
    expect(await builtSources(root)).toBe(first); // the same content: the same folder, not rebuilt

    writeFileSync(join(root, 'src/word.ts'), "export const word: string = 'second';\n");
    const second = await builtSources(root);
    expect(second).not.toBe(first);
    expect(run(join(second, 'src/main.js'))).toBe('second');

    // the compiler's options shape the output too (esbuild reads tsconfig.json)
    writeFileSync(join(root, 'tsconfig.json'), '{ "compilerOptions": { "useDefineForClassFields": false } }\n');
    const third = await builtSources(root);
    expect(third).not.toBe(second);
  });
});

describe("the suite's bundle of the command", () => {
  it('runs the command; every chunk sits where the fork worker’s path names the build’s worker', async () => {
    const built = await builtSources();
    const main = join(built, CLI_BUNDLE_MAIN);
    const version = spawnSync(process.execPath, [main, '--version'], { encoding: 'utf8' });
    expect(version.stdout.trim()).toBe(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version);
    // src/core/pool/worker-file.ts names the worker `../../../workers/fork-worker.js` from its chunk
    const folders = new Set(
      files(join(built, CLI_BUNDLE))
        .filter((f) => f.endsWith('.js'))
        .map((f) => dirname(f)),
    );
    expect([...folders]).toEqual([dirname(main)]);
    const worker = fileURLToPath(new URL('../../../workers/fork-worker.js', pathToFileURL(main)));
    expect(worker).toBe(join(built, 'workers/fork-worker.js'));
    expect(existsSync(worker)).toBe(true);
  });
});
