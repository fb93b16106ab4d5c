import { symlink } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { errorOf, executorIn, makeSandbox, okContent, type Sandbox } from './helpers.ts';

let sandbox: Sandbox;
beforeEach(async () => {
  sandbox = await makeSandbox();
  for (const file of [
    'README.md',
    'src/z.ts',
    'src/a.ts',
    'src/a-b.ts',
    'src/a/inner.ts',
    'src/lib/util.ts',
    'test/a.test.ts',
    '.config/x.json',
  ]) {
    await sandbox.put(file, '');
  }
});
afterEach(() => sandbox.cleanup());

describe('glob', () => {
  it('returns workspace-relative files, sorted by code unit, no directories', async () => {
    const tools = executorIn(sandbox);
    expect(okContent(await tools.execute('glob', { pattern: 'src/**/*.ts' })).split('\n')).toEqual([
      'src/a-b.ts',
      'src/a.ts',
      'src/a/inner.ts',
      'src/lib/util.ts',
      'src/z.ts',
    ]);
    expect(okContent(await tools.execute('glob', { pattern: '**/*.{json,md}' }))).toBe('.config/x.json\nREADME.md');
    expect(okContent(await tools.execute('glob', { pattern: 'src/*' }))).toBe('src/a-b.ts\nsrc/a.ts\nsrc/z.ts');
  });

  it('says when nothing matched, also under a missing directory', async () => {
    const tools = executorIn(sandbox);
    expect(okContent(await tools.execute('glob', { pattern: '**/*.py' }))).toBe('No files matched.');
    expect(okContent(await tools.execute('glob', { pattern: 'nope/**/*.ts' }))).toBe('No files matched.');
  });

  it('caps results with a note', async () => {
    const tools = executorIn(sandbox, { limits: { maxGlobResults: 2 } });
    expect(okContent(await tools.execute('glob', { pattern: '**/*.ts' })).split('\n')).toEqual([
      'src/a-b.ts',
      'src/a.ts',
      '[truncated: 6 matches, first 2 shown; narrow the pattern]',
    ]);
  });

  it('notes a walk cut short on a huge tree', async () => {
    const tools = executorIn(sandbox, { limits: { maxWalkEntries: 3 } });
    expect(okContent(await tools.execute('glob', { pattern: '**/*.nothing' }))).toBe(
      '[truncated: stopped after 3 entries; start the pattern with a directory]',
    );
  });

  it('lists symlinks as entries but never descends into them', async () => {
    await symlink(sandbox.outside, path.join(sandbox.workspace, 'out'));
    await symlink(path.join(sandbox.workspace, 'src'), path.join(sandbox.workspace, 'src-alias'));
    await symlink('src/a.ts', path.join(sandbox.workspace, 'a-link.ts'));
    const tools = executorIn(sandbox);
    const all = okContent(await tools.execute('glob', { pattern: '**' })).split('\n');
    expect(all).toContain('out');
    expect(all).toContain('a-link.ts');
    expect(all.filter((p) => p.startsWith('out/') || p.startsWith('src-alias/'))).toEqual([]);
    // A pattern that names a symlinked directory inside the workspace starts there.
    expect(okContent(await tools.execute('glob', { pattern: 'src-alias/lib/*.ts' }))).toBe('src-alias/lib/util.ts');
    expect(errorOf(await tools.execute('glob', { pattern: 'out/*' })).code).toBe('TOOL_PATH_ESCAPE');
  });

  it('reports an invalid pattern', async () => {
    const { code, content } = errorOf(await executorIn(sandbox).execute('glob', { pattern: 'src/[z-a].ts' }));
    expect(code).toBe('TOOL_BAD_PATTERN');
    expect(content).toContain('invalid glob src/[z-a].ts');
  });
});
