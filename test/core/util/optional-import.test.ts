import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { importOptional, OPTIONAL_PEERS } from '../../../src/core/util/optional-import.ts';

// A module outside the project, so bare specifiers cannot resolve to our own node_modules:
// importing it fails exactly as it does in an install without the optional peers.
const dir = mkdtempSync(join(tmpdir(), 'forkcache-optional-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
function moduleImporting(specifier: string): string {
  const file = join(dir, `${specifier.replace(/\W/g, '_')}.mjs`);
  writeFileSync(file, `import * as m from '${specifier}';\nexport default m;\n`);
  return pathToFileURL(file).href;
}

describe('optional peer dependencies', () => {
  it('are declared in package.json as optional peers with the ranges the error message names, and as dev dependencies', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as Record<
      string,
      Record<string, unknown>
    >;
    const specs = Object.values(OPTIONAL_PEERS).flat();
    const declared = Object.fromEntries(
      specs.map((spec) => [spec.slice(0, spec.indexOf('@', 1)), spec.slice(spec.indexOf('@', 1) + 1)]),
    );
    expect(pkg['peerDependencies']).toEqual(declared);
    for (const name of Object.keys(declared)) {
      expect(pkg['peerDependenciesMeta']?.[name]).toEqual({ optional: true });
      expect(pkg['devDependencies']?.[name], `${name} in devDependencies (the tests use it)`).toBeDefined();
      expect(pkg['dependencies']?.[name], `${name} must not be a runtime dependency`).toBeUndefined();
    }
  });

  // In a plain Node process: vitest's module runner handles `import()` itself and fails with
  // its own error, not Node's ERR_MODULE_NOT_FOUND that an installed package meets.
  it('a missing peer becomes DEPENDENCY_MISSING naming what to install; other failures pass through', () => {
    const script = `
      import { importOptional } from ${JSON.stringify(pathToFileURL(join(process.cwd(), 'src/core/util/optional-import.ts')).href)};
      const cases = [
        ['report', ${JSON.stringify(moduleImporting('echarts/core'))}],
        ['distributed', ${JSON.stringify(moduleImporting('ioredis'))}],
        ['report', ${JSON.stringify(moduleImporting('bullmq'))}],
      ];
      const out = [];
      for (const [feature, url] of cases) {
        try { await importOptional(feature, () => import(url)); out.push(null); }
        catch (err) { out.push({ code: err.code, message: err.message }); }
      }
      process.stdout.write(JSON.stringify(out));`;
    const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      encoding: 'utf8',
    });
    expect(run.status, run.stderr).toBe(0);
    const [report, distributed, other] = JSON.parse(run.stdout) as { code: string; message: string }[];
    expect(report).toEqual({
      code: 'DEPENDENCY_MISSING',
      message:
        'the HTML report needs echarts (an optional peer dependency of forkcache, not installed with it); echarts cannot be found: run npm install echarts@^6.1.0',
    });
    expect(distributed!.code).toBe('DEPENDENCY_MISSING');
    expect(distributed!.message).toMatch(
      /needs bullmq and ioredis .*; ioredis cannot be found: run npm install 'bullmq@\^5\.\d+\.\d+ \|\| \^6\.\d+\.\d+' ioredis@\^5/,
    );
    // bullmq is not the report's package: Node's own error, untouched
    expect(other!.code).toBe('ERR_MODULE_NOT_FOUND');
  });

  it('passes through what the import returns or any other error', async () => {
    const boom = new Error('boom');
    await expect(importOptional('report', () => Promise.reject(boom))).rejects.toBe(boom);
    await expect(importOptional('report', () => Promise.resolve(42))).resolves.toBe(42);
  });
});
