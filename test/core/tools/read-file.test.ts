import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { splitReadResult } from '../../../src/core/wire/read-file-text.ts';
import { errorOf, executorIn, makeSandbox, okContent, type Sandbox } from './helpers.ts';

let sandbox: Sandbox;
beforeEach(async () => {
  sandbox = await makeSandbox();
});
afterEach(() => sandbox.cleanup());

const numbered = (n: number): string => Array.from({ length: n }, (_, i) => `line ${i + 1}\n`).join('');

describe('read_file', () => {
  it('returns the whole text exactly, CRLF, unicode and a missing final newline included', async () => {
    const text = 'héllo — wörld\r\nsecond 🎉\nno newline at end';
    await sandbox.put('a.txt', text);
    expect(okContent(await executorIn(sandbox).execute('read_file', { path: 'a.txt' }))).toBe(text);
  });

  it('reads an empty file as an empty string', async () => {
    await sandbox.put('empty.txt', '');
    const tools = executorIn(sandbox);
    expect(okContent(await tools.execute('read_file', { path: 'empty.txt' }))).toBe('');
    expect(okContent(await tools.execute('read_file', { path: 'empty.txt', offset: 1 }))).toBe('');
  });

  it('reads lines offset .. offset+limit-1 (1-based), terminators kept', async () => {
    await sandbox.put('n.txt', numbered(10));
    const tools = executorIn(sandbox);
    const read = async (input: object) => okContent(await tools.execute('read_file', { path: 'n.txt', ...input }));
    expect(await read({ offset: 3, limit: 2 })).toBe('line 3\nline 4\n');
    expect(await read({ offset: 1, limit: 1 })).toBe('line 1\n');
    expect(await read({ limit: 2 })).toBe('line 1\nline 2\n');
    expect(await read({ offset: 9 })).toBe('line 9\nline 10\n');
    expect(await read({ offset: 10, limit: 50 })).toBe('line 10\n');
  });

  it('handles a last line without a newline', async () => {
    await sandbox.put('t.txt', 'a\nb\nc');
    const tools = executorIn(sandbox);
    expect(okContent(await tools.execute('read_file', { path: 't.txt', offset: 3 }))).toBe('c');
    const past = errorOf(await tools.execute('read_file', { path: 't.txt', offset: 4 }));
    expect(past.code).toBe('TOOL_INPUT_INVALID');
    expect(past.content).toContain('offset 4 is past the end of the file (3 lines)');
  });

  it('refuses an offset past the end of the file, saying how long it is', async () => {
    await sandbox.put('n.txt', numbered(5));
    const { code, content } = errorOf(await executorIn(sandbox).execute('read_file', { path: 'n.txt', offset: 6 }));
    expect(code).toBe('TOOL_INPUT_INVALID');
    expect(content).toBe('n.txt: offset 6 is past the end of the file (5 lines)');
  });

  it('returns the lines of a file over the read limit that fit, and says how to read the rest', async () => {
    await sandbox.put('big.txt', numbered(200)); // 1,692 bytes
    const tools = executorIn(sandbox, { limits: { maxReadBytes: 1000 } });
    const first = okContent(await tools.execute('read_file', { path: 'big.txt' }));
    // 'line 1\n'..'line 9\n' are 63 bytes, 'line 10\n'..'line 99\n' 8 bytes each: 100+ 9 bytes: 123 lines are 999 bytes
    expect(first).toBe(
      `${numbered(123)}[truncated: big.txt is 1692 bytes, over the read limit; this shows lines 1-123. Read the rest with offset: 124]`,
    );
    const { text, nextOffset } = splitReadResult(first);
    expect(text).toBe(numbered(123));
    const rest = okContent(await tools.execute('read_file', { path: 'big.txt', offset: nextOffset }));
    expect(splitReadResult(rest)).toEqual({ text: numbered(200).slice(numbered(123).length), nextOffset: undefined });
    expect(okContent(await tools.execute('read_file', { path: 'big.txt', offset: 150, limit: 3 }))).toBe(
      'line 150\nline 151\nline 152\n',
    );
  });

  it('pages through a file far over the limit and chunk size; a part too big is cut at a whole line', async () => {
    await sandbox.put('huge.txt', numbered(40_000)); // ~430 KB, several scan chunks
    const tools = executorIn(sandbox);
    const pages: string[] = [];
    for (let offset: number | undefined = 1; offset !== undefined;) {
      const part = splitReadResult(okContent(await tools.execute('read_file', { path: 'huge.txt', offset })));
      pages.push(part.text);
      offset = part.nextOffset;
    }
    expect(pages).toHaveLength(2);
    expect(pages.join('')).toBe(numbered(40_000));
    expect(okContent(await tools.execute('read_file', { path: 'huge.txt', offset: 39_999 }))).toBe(
      'line 39999\nline 40000\n',
    );
    const small = executorIn(sandbox, { limits: { maxReadBytes: 100 } });
    // 13 lines are 95 bytes, 14 are 103: a part of 50 lines is cut after line 13
    expect(okContent(await small.execute('read_file', { path: 'huge.txt', offset: 1, limit: 50 }))).toBe(
      `${numbered(13)}[truncated: huge.txt is 428894 bytes, over the read limit; this shows lines 1-13. Read the rest with offset: 14]`,
    );
    expect(okContent(await small.execute('read_file', { path: 'huge.txt', offset: 1, limit: 13 }))).toBe(numbered(13));
  });

  it('says when one line alone is over the limit', async () => {
    await sandbox.put('wide.txt', `short\n${'x'.repeat(500)}\nend\n`);
    const tools = executorIn(sandbox, { limits: { maxReadBytes: 100 } });
    const { content } = errorOf(await tools.execute('read_file', { path: 'wide.txt', offset: 2, limit: 1 }));
    expect(content).toBe('wide.txt: line 2 alone is over the read limit of 100 bytes');
  });

  it('refuses binary files (a NUL byte in the first 8 KiB), also when reading a part', async () => {
    await sandbox.put('bin.dat', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0x0a]));
    await sandbox.put('late-nul.txt', Buffer.concat([Buffer.from('a'.repeat(9000)), Buffer.from([0])]));
    const tools = executorIn(sandbox);
    for (const input of [{ path: 'bin.dat' }, { path: 'bin.dat', offset: 1, limit: 1 }]) {
      const { code, content } = errorOf(await tools.execute('read_file', input));
      expect(code).toBe('TOOL_BINARY_FILE');
      expect(content).toContain('bin.dat is a binary file');
    }
    // Past the sniffed window the file counts as text (the same rule as git's).
    expect(okContent(await tools.execute('read_file', { path: 'late-nul.txt' }))).toHaveLength(9001);
  });

  it('reports missing files and directories with workspace-relative paths', async () => {
    await sandbox.put('dir/a.txt', 'a');
    const tools = executorIn(sandbox);
    const missing = errorOf(await tools.execute('read_file', { path: 'dir/nope.txt' }));
    expect(missing).toEqual({ code: 'TOOL_NOT_FOUND', content: 'dir/nope.txt: no such file or directory' });
    const dir = errorOf(await tools.execute('read_file', { path: 'dir' }));
    expect(dir).toEqual({ code: 'TOOL_IO_ERROR', content: 'dir is a directory; use list_dir' });
    expect(missing.content).not.toContain(sandbox.base);
  });

  it('validates offset and limit', async () => {
    await sandbox.put('a.txt', 'a');
    const tools = executorIn(sandbox);
    expect(errorOf(await tools.execute('read_file', { path: 'a.txt', offset: 0 })).content).toMatch(
      /^read_file\.offset: /,
    );
    expect(errorOf(await tools.execute('read_file', { path: 'a.txt', limit: 1.5 })).content).toMatch(
      /^read_file\.limit: /,
    );
    expect(errorOf(await tools.execute('read_file', { path: 'a.txt', offset: '2' })).content).toMatch(
      /^read_file\.offset: .*expected number/,
    );
  });
});
