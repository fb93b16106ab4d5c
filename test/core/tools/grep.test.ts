import { symlink } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { errorOf, executorIn, makeSandbox, okContent, type Sandbox } from './helpers.ts';

let sandbox: Sandbox;
beforeEach(async () => {
  sandbox = await makeSandbox();
  await sandbox.put('src/b.ts', 'export const b = 1;\n// TODO: b\n');
  await sandbox.put('src/a.ts', 'import { b } from "./b";\r\n// TODO: a\r\n');
  await sandbox.put('src/lib/c.md', 'TODO in markdown\n');
  await sandbox.put('notes.txt', 'nothing here\n'.repeat(9) + 'TODO: line ten\n');
});
afterEach(() => sandbox.cleanup());

describe('grep', () => {
  it('returns relative/file:line:text lines, sorted by file then line', async () => {
    const out = okContent(await executorIn(sandbox).execute('grep', { pattern: 'TODO' }));
    expect(out.split('\n')).toEqual([
      'notes.txt:10:TODO: line ten',
      'src/a.ts:2:// TODO: a',
      'src/b.ts:2:// TODO: b',
      'src/lib/c.md:1:TODO in markdown',
    ]);
  });

  it('takes regular expressions (RE2 syntax)', async () => {
    const tools = executorIn(sandbox);
    expect(okContent(await tools.execute('grep', { pattern: '^export\\s+const\\s+\\w+ = \\d;$' }))).toBe(
      'src/b.ts:1:export const b = 1;',
    );
    expect(okContent(await tools.execute('grep', { pattern: 'b"?;?$', path: 'src/a.ts' }))).toBe(
      'src/a.ts:1:import { b } from "./b";',
    );
  });

  it('searches under path, or in one file', async () => {
    const tools = executorIn(sandbox);
    expect(okContent(await tools.execute('grep', { pattern: 'TODO', path: 'src/lib' }))).toBe(
      'src/lib/c.md:1:TODO in markdown',
    );
    expect(okContent(await tools.execute('grep', { pattern: 'TODO', path: './src/b.ts' }))).toBe(
      'src/b.ts:2:// TODO: b',
    );
  });

  it('filters files by glob: by name without /, by path below `path` with /', async () => {
    const tools = executorIn(sandbox);
    expect(okContent(await tools.execute('grep', { pattern: 'TODO', glob: '*.ts' })).split('\n')).toEqual([
      'src/a.ts:2:// TODO: a',
      'src/b.ts:2:// TODO: b',
    ]);
    expect(okContent(await tools.execute('grep', { pattern: 'TODO', path: 'src', glob: 'lib/*.md' }))).toBe(
      'src/lib/c.md:1:TODO in markdown',
    );
    expect(okContent(await tools.execute('grep', { pattern: 'TODO', glob: 'src/**/*.{md,txt}' }))).toBe(
      'src/lib/c.md:1:TODO in markdown',
    );
  });

  it('says when nothing matched', async () => {
    expect(okContent(await executorIn(sandbox).execute('grep', { pattern: 'FIXME' }))).toBe('No matches.');
  });

  it('caps matches with a clear truncated note', async () => {
    await sandbox.put('many.txt', 'hit\n'.repeat(50));
    const tools = executorIn(sandbox, { limits: { maxGrepMatches: 3 } });
    expect(okContent(await tools.execute('grep', { pattern: 'hit', path: 'many.txt' })).split('\n')).toEqual([
      'many.txt:1:hit',
      'many.txt:2:hit',
      'many.txt:3:hit',
      '[truncated: first 3 matches shown; narrow the pattern, path or glob]',
    ]);
  });

  it('cuts very long lines', async () => {
    await sandbox.put('min.js', `var x="${'y'.repeat(1000)}";\n`);
    const out = okContent(
      await executorIn(sandbox, { limits: { maxLineChars: 20 } }).execute('grep', { pattern: 'var', path: 'min.js' }),
    );
    expect(out).toBe(`min.js:1:var x="${'y'.repeat(13)}…`);
  });

  it('skips binary files and files over the size limit, and says so', async () => {
    await sandbox.put('img.png', Buffer.concat([Buffer.from('TODO'), Buffer.from([0, 1, 2])]));
    await sandbox.put('big.log', `TODO\n${'x'.repeat(5000)}\n`);
    const tools = executorIn(sandbox, { limits: { maxGrepFileBytes: 1000 } });
    const out = okContent(await tools.execute('grep', { pattern: 'TODO', glob: '*.{png,log}' }));
    expect(out.split('\n')).toEqual([
      'No matches.',
      '[skipped 1 file(s) over 1000 bytes]',
      '[skipped 1 binary file(s)]',
    ]);
  });

  it('skips symlinks, inside or out', async () => {
    await symlink(sandbox.outside, path.join(sandbox.workspace, 'out'));
    await symlink(path.join(sandbox.outside, 'secret.txt'), path.join(sandbox.workspace, 'leak.txt'));
    const out = okContent(await executorIn(sandbox).execute('grep', { pattern: 'SECRET|TODO' }));
    expect(out).not.toContain('SECRET');
    expect(out.split('\n')).toHaveLength(4);
  });

  it('reports an invalid regular expression, a bad glob and a missing path', async () => {
    const tools = executorIn(sandbox);
    const regex = errorOf(await tools.execute('grep', { pattern: '(unclosed' }));
    expect(regex.code).toBe('TOOL_BAD_PATTERN');
    expect(regex.content).toMatch(/^invalid regular expression \(RE2 syntax: no lookaround, no backreferences\): /);
    expect(errorOf(await tools.execute('grep', { pattern: 'x', glob: '[z-a]' })).code).toBe('TOOL_BAD_PATTERN');
    expect(errorOf(await tools.execute('grep', { pattern: 'x', path: 'nope' }))).toEqual({
      code: 'TOOL_NOT_FOUND',
      content: 'nope: no such file or directory',
    });
  });
});
