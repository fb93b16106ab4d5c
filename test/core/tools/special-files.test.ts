import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { errorOf, executorIn, makeSandbox, okContent, type Sandbox } from './helpers.ts';

// A FIFO is the classic way to hang a tool: opening it for reading blocks until a writer comes.
let sandbox: Sandbox;
beforeEach(async () => {
  sandbox = await makeSandbox();
  await sandbox.put('text.txt', 'needle\n');
  execFileSync('mkfifo', [path.join(sandbox.workspace, 'pipe')]);
});
afterEach(() => sandbox.cleanup());

describe('special files', () => {
  it('read_file and edit_file refuse a FIFO instead of blocking on it', async () => {
    const tools = executorIn(sandbox);
    expect(errorOf(await tools.execute('read_file', { path: 'pipe' }))).toEqual({
      code: 'TOOL_IO_ERROR',
      content: 'pipe is not a regular file',
    });
    expect(errorOf(await tools.execute('edit_file', { path: 'pipe', old_string: 'a', new_string: 'b' })).code).toBe(
      'TOOL_IO_ERROR',
    );
  });

  it('write_file refuses a FIFO', async () => {
    const { code } = errorOf(await executorIn(sandbox).execute('write_file', { path: 'pipe', content: 'x' }));
    expect(code).toBe('TOOL_IO_ERROR');
  });

  it('grep and glob pass over a FIFO; list_dir shows it', async () => {
    const tools = executorIn(sandbox);
    expect(okContent(await tools.execute('grep', { pattern: 'needle' }))).toBe('text.txt:1:needle');
    expect(okContent(await tools.execute('grep', { pattern: 'needle', path: 'pipe' }))).toBe('No matches.');
    expect(okContent(await tools.execute('glob', { pattern: '*' }))).toBe('pipe\ntext.txt');
    expect(okContent(await tools.execute('list_dir', { path: '.' }))).toBe('pipe\ntext.txt');
  });
});
