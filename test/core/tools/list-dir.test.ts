import { mkdir, symlink } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { errorOf, executorIn, makeSandbox, okContent, type Sandbox } from './helpers.ts';

let sandbox: Sandbox;
beforeEach(async () => {
  sandbox = await makeSandbox();
});
afterEach(() => sandbox.cleanup());

describe('list_dir', () => {
  it('lists one entry per line in code-unit order, directories with /, symlinks with @', async () => {
    await sandbox.put('b.txt', '');
    await sandbox.put('A.txt', '');
    await sandbox.put('.hidden', '');
    await sandbox.put('src/index.ts', '');
    await sandbox.put('src/deep/x.ts', '');
    await symlink('b.txt', path.join(sandbox.workspace, 'link'));
    const tools = executorIn(sandbox);
    expect(okContent(await tools.execute('list_dir', { path: '.' }))).toBe('.hidden\nA.txt\nb.txt\nlink@\nsrc/');
    expect(okContent(await tools.execute('list_dir', { path: 'src' }))).toBe('deep/\nindex.ts');
    expect(okContent(await tools.execute('list_dir', { path: 'src/deep/' }))).toBe('x.ts');
  });

  it('says so for an empty directory', async () => {
    await mkdir(path.join(sandbox.workspace, 'empty'));
    expect(okContent(await executorIn(sandbox).execute('list_dir', { path: 'empty' }))).toBe('(empty directory)');
  });

  it('caps long listings with a note', async () => {
    for (let i = 0; i < 12; i += 1) await sandbox.put(`f${String(i).padStart(2, '0')}.txt`, '');
    const tools = executorIn(sandbox, { limits: { maxListEntries: 5 } });
    const lines = okContent(await tools.execute('list_dir', { path: '.' })).split('\n');
    expect(lines).toEqual([
      'f00.txt',
      'f01.txt',
      'f02.txt',
      'f03.txt',
      'f04.txt',
      '[truncated: 12 entries, first 5 shown; use glob to narrow]',
    ]);
  });

  it('fails clearly on a file or a missing directory', async () => {
    await sandbox.put('a.txt', 'a');
    const tools = executorIn(sandbox);
    expect(errorOf(await tools.execute('list_dir', { path: 'a.txt' }))).toEqual({
      code: 'TOOL_IO_ERROR',
      content: 'a.txt is a file, not a directory; use read_file',
    });
    expect(errorOf(await tools.execute('list_dir', { path: 'nope' }))).toEqual({
      code: 'TOOL_NOT_FOUND',
      content: 'nope: no such file or directory',
    });
  });
});
