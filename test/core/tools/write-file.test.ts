import { mkdir, readFile, readdir, symlink } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { errorOf, executorIn, makeSandbox, okContent, type Sandbox } from './helpers.ts';

let sandbox: Sandbox;
const read = (relative: string): Promise<string> => readFile(path.join(sandbox.workspace, relative), 'utf8');

beforeEach(async () => {
  sandbox = await makeSandbox();
});
afterEach(() => sandbox.cleanup());

describe('write_file', () => {
  it('creates a file and its missing parent directories', async () => {
    const result = await executorIn(sandbox).execute('write_file', { path: 'a/b/c/new.txt', content: 'héllo\n' });
    expect(okContent(result)).toBe('Created a/b/c/new.txt (7 bytes).');
    expect(await read('a/b/c/new.txt')).toBe('héllo\n');
  });

  it('overwrites an existing file completely', async () => {
    await sandbox.put('x.txt', 'a much longer old content\n');
    expect(okContent(await executorIn(sandbox).execute('write_file', { path: 'x.txt', content: 'new' }))).toBe(
      'Overwrote x.txt (3 bytes).',
    );
    expect(await read('x.txt')).toBe('new');
  });

  it('writes an empty file', async () => {
    okContent(await executorIn(sandbox).execute('write_file', { path: 'empty', content: '' }));
    expect(await read('empty')).toBe('');
  });

  it('writes through a symlinked directory that stays inside the workspace', async () => {
    await mkdir(path.join(sandbox.workspace, 'real'));
    await symlink(path.join(sandbox.workspace, 'real'), path.join(sandbox.workspace, 'alias'));
    okContent(await executorIn(sandbox).execute('write_file', { path: 'alias/deep/f.txt', content: 'ok' }));
    expect(await read('real/deep/f.txt')).toBe('ok');
  });

  it('refuses to write through a symlinked directory leading outside, creating nothing', async () => {
    await symlink(sandbox.outside, path.join(sandbox.workspace, 'out'));
    const tools = executorIn(sandbox);
    for (const p of ['out/new.txt', 'out/x/y/new.txt']) {
      expect(errorOf(await tools.execute('write_file', { path: p, content: 'x' })).code).toBe('TOOL_PATH_ESCAPE');
    }
    expect(await readdir(sandbox.outside)).toEqual(['secret.txt']);
  });

  it('fails clearly on a directory and on a file used as a directory', async () => {
    await sandbox.put('dir/f.txt', '');
    const tools = executorIn(sandbox);
    expect(errorOf(await tools.execute('write_file', { path: 'dir', content: 'x' }))).toEqual({
      code: 'TOOL_IO_ERROR',
      content: 'dir: is a directory',
    });
    expect(errorOf(await tools.execute('write_file', { path: 'dir/f.txt/g.txt', content: 'x' }))).toEqual({
      code: 'TOOL_NOT_FOUND',
      content: 'dir/f.txt/g.txt: a parent of the path is not a directory',
    });
  });

  it('requires content as a string', async () => {
    const { code, content } = errorOf(await executorIn(sandbox).execute('write_file', { path: 'x.txt' }));
    expect(code).toBe('TOOL_INPUT_INVALID');
    expect(content).toMatch(/^write_file\.content: .*expected string/);
  });
});
