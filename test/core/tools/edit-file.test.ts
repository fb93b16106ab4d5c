import { chmod, link, readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { errorOf, executorIn, makeSandbox, okContent, type Sandbox } from './helpers.ts';

let sandbox: Sandbox;
const read = (relative: string): Promise<string> => readFile(path.join(sandbox.workspace, relative), 'utf8');

beforeEach(async () => {
  sandbox = await makeSandbox();
  await sandbox.put('a.ts', 'const a = 1;\nconst b = 2;\nconst a2 = 1;\n');
});
afterEach(() => sandbox.cleanup());

describe('edit_file', () => {
  it('replaces a unique occurrence exactly', async () => {
    const result = await executorIn(sandbox).execute('edit_file', {
      path: 'a.ts',
      old_string: 'const b = 2;',
      new_string: 'const b = 3;',
    });
    expect(okContent(result)).toBe('Edited a.ts: replaced 1 occurrence.');
    expect(await read('a.ts')).toBe('const a = 1;\nconst b = 3;\nconst a2 = 1;\n');
  });

  it('refuses an ambiguous edit, saying how many times the text occurs', async () => {
    const { code, content } = errorOf(
      await executorIn(sandbox).execute('edit_file', { path: 'a.ts', old_string: '= 1;', new_string: '= 9;' }),
    );
    expect(code).toBe('TOOL_EDIT_FAILED');
    expect(content).toBe(
      'old_string occurs 2 times in a.ts; add surrounding lines to make it unique, or set replace_all: true',
    );
    expect(await read('a.ts')).toBe('const a = 1;\nconst b = 2;\nconst a2 = 1;\n');
  });

  it('replaces every occurrence with replace_all', async () => {
    const result = await executorIn(sandbox).execute('edit_file', {
      path: 'a.ts',
      old_string: '= 1;',
      new_string: '= 9;',
      replace_all: true,
    });
    expect(okContent(result)).toBe('Edited a.ts: replaced 2 occurrences.');
    expect(await read('a.ts')).toBe('const a = 9;\nconst b = 2;\nconst a2 = 9;\n');
  });

  it('counts non-overlapping occurrences', async () => {
    await sandbox.put('aaa.txt', 'aaaa');
    const { content } = errorOf(
      await executorIn(sandbox).execute('edit_file', { path: 'aaa.txt', old_string: 'aa', new_string: 'b' }),
    );
    expect(content).toContain('occurs 2 times');
  });

  it('fails clearly when the text is absent (whitespace counts)', async () => {
    const { code, content } = errorOf(
      await executorIn(sandbox).execute('edit_file', { path: 'a.ts', old_string: 'const  b = 2;', new_string: 'x' }),
    );
    expect(code).toBe('TOOL_EDIT_FAILED');
    expect(content).toMatch(/^old_string was not found in a\.ts; it must match the file exactly/);
  });

  it('refuses old_string equal to new_string, and an empty old_string', async () => {
    const tools = executorIn(sandbox);
    const same = errorOf(
      await tools.execute('edit_file', { path: 'a.ts', old_string: 'const b = 2;', new_string: 'const b = 2;' }),
    );
    expect(same).toEqual({
      code: 'TOOL_EDIT_FAILED',
      content: 'old_string and new_string are identical: the edit would change nothing',
    });
    const empty = errorOf(await tools.execute('edit_file', { path: 'a.ts', old_string: '', new_string: 'x' }));
    expect(empty.code).toBe('TOOL_INPUT_INVALID');
    expect(empty.content).toMatch(/^edit_file\.old_string: /);
  });

  it('inserts replacement text literally (`$&`, `$1` and `$$` are not patterns)', async () => {
    await sandbox.put('d.txt', 'price: X\n');
    okContent(
      await executorIn(sandbox).execute('edit_file', { path: 'd.txt', old_string: 'X', new_string: '$& $1 $$ $`' }),
    );
    expect(await read('d.txt')).toBe('price: $& $1 $$ $`\n');
  });

  it('replaces the file atomically, keeping its mode (a hard link keeps the old text: the price of never showing a half-written file)', async () => {
    const file = path.join(sandbox.workspace, 'a.ts');
    await chmod(file, 0o640);
    await link(file, path.join(sandbox.workspace, 'hard.ts'));
    okContent(
      await executorIn(sandbox).execute('edit_file', {
        path: 'a.ts',
        old_string: 'const b = 2;',
        new_string: 'const b = 22;',
      }),
    );
    expect((await stat(file)).mode & 0o777).toBe(0o640);
    expect(await read('a.ts')).toContain('const b = 22;');
    expect(await read('hard.ts')).toContain('const b = 2;');
    expect((await readdir(sandbox.workspace)).filter((f) => f.includes('forkcache-tmp'))).toEqual([]);
  });

  it('shrinks a file correctly (no stale tail)', async () => {
    okContent(
      await executorIn(sandbox).execute('edit_file', {
        path: 'a.ts',
        old_string: 'const a = 1;\nconst b = 2;\n',
        new_string: '',
      }),
    );
    expect(await read('a.ts')).toBe('const a2 = 1;\n');
  });

  it('edits a file larger than the read limit (read in parts, edited whole)', async () => {
    // over the default 262,144-byte read limit, under the 1 MiB edit limit
    const line = (i: number): string => `export const value${i} = buildHeaders(${i});\n`;
    const text = Array.from({ length: 8000 }, (_, i) => line(i)).join('');
    expect(text.length).toBeGreaterThan(262_144);
    await sandbox.put('big.ts', text);
    const tools = executorIn(sandbox);
    expect(okContent(await tools.execute('read_file', { path: 'big.ts' }))).toMatch(
      /Read the rest with offset: \d+\]$/,
    );
    const done = await tools.execute('edit_file', {
      path: 'big.ts',
      old_string: 'buildHeaders',
      new_string: 'mergeHeaders',
      replace_all: true,
    });
    expect(okContent(done)).toBe('Edited big.ts: replaced 8000 occurrences.');
    expect(await read('big.ts')).toBe(text.replaceAll('buildHeaders', 'mergeHeaders'));
  });

  it('refuses binary, oversized, missing and directory targets', async () => {
    await sandbox.put('bin.dat', Buffer.from([65, 0, 66]));
    await sandbox.put('big.txt', 'x'.repeat(2000));
    await sandbox.put('dir/f.txt', '');
    const tools = executorIn(sandbox, { limits: { maxEditBytes: 1000 } });
    const edit = (p: string) => tools.execute('edit_file', { path: p, old_string: 'A', new_string: 'B' });
    expect(errorOf(await edit('bin.dat')).code).toBe('TOOL_BINARY_FILE');
    expect(errorOf(await edit('big.txt'))).toEqual({
      code: 'TOOL_FILE_TOO_LARGE',
      content: 'big.txt is 2000 bytes, over the edit limit of 1000 bytes',
    });
    expect(errorOf(await edit('missing.txt')).code).toBe('TOOL_NOT_FOUND');
    expect(errorOf(await edit('dir')).content).toBe('dir is a directory; use list_dir');
  });

  it('names the bad field in input errors', async () => {
    const { code, content } = errorOf(
      await executorIn(sandbox).execute('edit_file', { path: 'a.ts', old_string: 42, new_string: 'x' }),
    );
    expect(code).toBe('TOOL_INPUT_INVALID');
    expect(content).toMatch(/^edit_file\.old_string: .*expected string/);
    const typo = errorOf(
      await executorIn(sandbox).execute('edit_file', {
        path: 'a.ts',
        old_string: 'a',
        new_string: 'b',
        replaceAll: true,
      }),
    );
    expect(typo.content).toContain('replaceAll');
  });
});
