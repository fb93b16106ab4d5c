import { existsSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ForkcacheError } from '../../../src/core/util/errors.ts';
import { SPAWN_TOOL_NAME } from '../../../src/core/wire/fork-text.ts';
import { createToolExecutor } from '../../../src/core/tools/executor.ts';
import { DEFAULT_TOOL_LIMITS } from '../../../src/core/tools/limits.ts';
import { FILE_TOOL_NAMES } from '../../../src/core/wire/tool-names.ts';
import { errorOf, executorIn, makeSandbox, okContent, type Sandbox } from './helpers.ts';

let sandbox: Sandbox;
beforeEach(async () => {
  sandbox = await makeSandbox();
  await sandbox.put('a.txt', 'alpha\n');
});
afterEach(() => sandbox.cleanup());

function configError(options: unknown): ForkcacheError {
  try {
    createToolExecutor(options as Parameters<typeof createToolExecutor>[0]);
  } catch (err) {
    expect(err).toBeInstanceOf(ForkcacheError);
    expect((err as ForkcacheError).code).toBe('TOOL_CONFIG_INVALID');
    return err as ForkcacheError;
  }
  throw new Error('expected createToolExecutor to throw');
}

describe('createToolExecutor', () => {
  it('allows the file tools by default, never bash or the spawn tool', () => {
    const tools = executorIn(sandbox);
    expect(tools.allowed).toEqual([...FILE_TOOL_NAMES]);
    expect(tools.isAllowed('read_file')).toBe(true);
    expect(tools.isAllowed('bash')).toBe(false);
    expect(tools.isAllowed(SPAWN_TOOL_NAME)).toBe(false);
    expect(tools.workspace).toBe(realpathSync(sandbox.workspace));
    expect(tools.limits).toEqual(DEFAULT_TOOL_LIMITS);
  });

  it('merges limit overrides over the defaults', () => {
    const tools = executorIn(sandbox, { limits: { maxReadBytes: 10 } });
    expect(tools.limits).toEqual({ ...DEFAULT_TOOL_LIMITS, maxReadBytes: 10 });
    expect(Object.isFrozen(tools.limits)).toBe(true);
  });

  it('throws TOOL_CONFIG_INVALID, naming the field, for a bad configuration', () => {
    expect(configError({ workspace: path.join(sandbox.base, 'missing') }).message).toContain('does not exist');
    expect(configError({ workspace: '' }).message).toMatch(/^createToolExecutor: workspace: /);
    expect(configError({ workspace: sandbox.workspace, allow: ['read_file', 'rm_rf'] }).message).toMatch(/allow\[1\]/);
    expect(configError({ workspace: sandbox.workspace, allow: [SPAWN_TOOL_NAME] }).message).toContain(
      'may not list agent',
    );
    expect(configError({ workspace: sandbox.workspace, limits: { maxReadBytes: 0 } }).message).toMatch(
      /limits\.maxReadBytes/,
    );
    expect(configError({ workspace: sandbox.workspace, limits: { maxReadByte: 10 } }).message).toMatch(/maxReadByte/);
  });
});

describe('ToolExecutor.execute', () => {
  it('refuses a declared tool outside the allowlist, naming it and what is allowed', async () => {
    const tools = executorIn(sandbox, { allow: ['read_file', 'grep'] });
    expect(errorOf(await tools.execute('write_file', { path: 'b.txt', content: 'x' }))).toEqual({
      code: 'TOOL_NOT_ALLOWED',
      content: 'tool write_file is not allowed for this fork; it may use: read_file, grep',
    });
    expect(existsSync(path.join(sandbox.workspace, 'b.txt'))).toBe(false);
    expect(okContent(await tools.execute('read_file', { path: 'a.txt' }))).toBe('alpha\n');
  });

  it('refuses unknown tools by name', async () => {
    expect(errorOf(await executorIn(sandbox).execute('delete_everything', {}))).toEqual({
      code: 'TOOL_UNKNOWN',
      content:
        'unknown tool "delete_everything"; this fork may use: read_file, list_dir, grep, glob, edit_file, write_file',
    });
  });

  it('never executes the spawn tool: the engine handles it', async () => {
    const { code, content } = errorOf(await executorIn(sandbox).execute(SPAWN_TOOL_NAME, { directive: 'do it' }));
    expect(code).toBe('TOOL_NOT_EXECUTABLE');
    expect(content).toContain('not executable here');
  });

  it('checks the allowlist before the input', async () => {
    const tools = executorIn(sandbox, { allow: ['read_file'] });
    expect(errorOf(await tools.execute('edit_file', { nonsense: true })).code).toBe('TOOL_NOT_ALLOWED');
  });

  it('returns input errors naming the tool and the field', async () => {
    const tools = executorIn(sandbox);
    expect(errorOf(await tools.execute('read_file', 'a.txt'))).toEqual({
      code: 'TOOL_INPUT_INVALID',
      content: 'read_file: Invalid input: expected object, received string',
    });
    expect(errorOf(await tools.execute('read_file', {})).content).toMatch(/^read_file\.path: .*expected string/);
    expect(errorOf(await tools.execute('grep', { pattern: '' })).content).toBe(
      'grep.pattern: expected a non-empty pattern',
    );
    const two = errorOf(await tools.execute('edit_file', { path: 1, old_string: 'a' })).content;
    expect(two).toMatch(/edit_file\.path: .*; edit_file\.new_string: /);
  });

  it('rejects with the abort reason, before doing anything, when the signal is already aborted', async () => {
    const tools = executorIn(sandbox);
    const reason = new Error('cancelled');
    const signal = AbortSignal.abort(reason);
    await expect(tools.execute('write_file', { path: 'late.txt', content: 'x' }, { signal })).rejects.toBe(reason);
    await expect(tools.execute('nope', {}, { signal })).rejects.toBe(reason);
    expect(existsSync(path.join(sandbox.workspace, 'late.txt'))).toBe(false);
  });

  it('stops a long walk when aborted mid-way', async () => {
    for (let i = 0; i < 30; i += 1) await sandbox.put(`d${i}/f.txt`, 'needle\n');
    const tools = executorIn(sandbox);
    const controller = new AbortController();
    const pending = tools.execute('grep', { pattern: 'needle' }, { signal: controller.signal });
    controller.abort(new Error('enough'));
    await expect(pending).rejects.toThrow('enough');
  });

  it('runs calls concurrently without interference', async () => {
    const tools = executorIn(sandbox);
    const writes = Array.from({ length: 20 }, (_, i) =>
      tools.execute('write_file', { path: `p/${i % 3}/f${i}.txt`, content: String(i) }),
    );
    for (const result of await Promise.all(writes)) okContent(result);
    const reads = await Promise.all(
      Array.from({ length: 20 }, (_, i) => tools.execute('read_file', { path: `p/${i % 3}/f${i}.txt` })),
    );
    expect(reads.map(okContent)).toEqual(Array.from({ length: 20 }, (_, i) => String(i)));
  });
});
